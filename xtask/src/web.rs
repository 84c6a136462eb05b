//! The page: building the wasm module and the JavaScript it needs into `web/`, serving `web/` on
//! 127.0.0.1, and writing a static bundle.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{cargo, have, root, run, target_dir};

/// The pinned wasm-bindgen version (Cargo.toml); the CLI that writes the JS glue must match it.
pub const WASM_BINDGEN: &str = "0.2.130";

/// Adds the wasm32 target and the wasm-bindgen CLI of the pinned version when they are missing.
pub fn setup_wasm_tools() -> Result<(), String> {
    let targets = Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output()
        .map_err(|e| format!("rustup: {e}"))?;
    if !String::from_utf8_lossy(&targets.stdout).contains("wasm32-unknown-unknown") {
        run(Command::new("rustup").args(["target", "add", "wasm32-unknown-unknown"]))?;
    }
    if !have("wasm-bindgen", "--version").is_some_and(|v| v.contains(WASM_BINDGEN)) {
        // Without --locked: a dependency its lock file names is no longer in the registry.
        run(cargo().args(["install", "wasm-bindgen-cli", "--version", WASM_BINDGEN]))?;
    }
    Ok(())
}

/// The npm packages of `web/package-lock.json` (Chart.js for the page; playwright-core and
/// TensorFlow.js for the tests and the benchmark), installed once.
pub fn setup_npm() -> Result<(), String> {
    let web = root().join("web");
    if web.join("node_modules/chart.js/package.json").exists()
        && web
            .join("node_modules/playwright-core/package.json")
            .exists()
    {
        return Ok(());
    }
    if have("npm", "--version").is_none() {
        return Err("npm is needed for the page's charting library: install Node.js".into());
    }
    run(Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund", "--prefix"])
        .arg(&web))
}

/// Builds the page into `web/`: the crate as wasm (release) with its JS glue in `web/pkg/`, and
/// the npm scripts the page loads in `web/vendor/`.
pub fn build() -> Result<(), String> {
    setup_wasm_tools()?;
    setup_npm()?;
    run(cargo().args([
        "rustc",
        "--package",
        "distillrank",
        "--lib",
        "--crate-type",
        "cdylib",
        "--release",
        "--target",
        "wasm32-unknown-unknown",
        "--no-default-features",
    ]))?;
    let wasm = target_dir().join("wasm32-unknown-unknown/release/distillrank.wasm");
    run(Command::new("wasm-bindgen")
        .args(["--target", "web", "--no-typescript", "--out-dir"])
        .arg(root().join("web/pkg"))
        .arg(&wasm))?;
    let vendor = root().join("web/vendor");
    std::fs::create_dir_all(&vendor).map_err(|e| format!("{}: {e}", vendor.display()))?;
    for (from, to) in VENDORED {
        let from = root().join("web/node_modules").join(from);
        std::fs::copy(&from, vendor.join(to))
            .map_err(|e| format!("{}: {e} (run npm ci in web/)", from.display()))?;
    }
    Ok(())
}

/// Scripts from npm the pages load, copied to `web/vendor/` (npm path, file name).
const VENDORED: [(&str, &str); 3] = [
    ("chart.js/dist/chart.umd.min.js", "chart.umd.min.js"),
    ("@tensorflow/tfjs/dist/tf.min.js", "tf.min.js"),
    (
        "@tensorflow/tfjs-backend-webgpu/dist/tf-backend-webgpu.min.js",
        "tf-backend-webgpu.min.js",
    ),
];

/// The files of the page, relative to `web/`.
const PAGE_FILES: [&str; 15] = [
    "index.html",
    "style.css",
    "main.js",
    "js/dom.js",
    "js/state.js",
    "js/describe.js",
    "js/setup.js",
    "js/settings.js",
    "js/workers.js",
    "js/charts.js",
    "js/compare.js",
    "js/objectives.js",
    "worker.js",
    "bench.html",
    "bench.js",
];

/// Copies the built page to `dir`: a static bundle any web server can host.
pub fn dist(dir: &Path) -> Result<(), String> {
    build()?;
    let web = root().join("web");
    let copy = |rel: &str| -> Result<(), String> {
        let to = dir.join(rel);
        std::fs::create_dir_all(to.parent().unwrap()).map_err(|e| e.to_string())?;
        std::fs::copy(web.join(rel), &to)
            .map(|_| ())
            .map_err(|e| format!("{rel}: {e}"))
    };
    for f in PAGE_FILES {
        copy(f)?;
    }
    for (_, f) in VENDORED {
        copy(&format!("vendor/{f}"))?;
    }
    for entry in std::fs::read_dir(web.join("pkg")).map_err(|e| e.to_string())? {
        let name = entry.map_err(|e| e.to_string())?.file_name();
        copy(&format!("pkg/{}", name.to_string_lossy()))?;
    }
    // The isolation headers for hosts that read a `_headers` file (Netlify, Cloudflare Pages);
    // elsewhere, serve them from the host's configuration, or each worker of the pool holds its
    // own copy of the data.
    let headers = format!("/*\n  {}\n", ISOLATION.trim_end().replace("\r\n", "\n  "));
    std::fs::write(dir.join("_headers"), headers).map_err(|e| format!("_headers: {e}"))?;
    println!("wrote the page to {}", dir.display());
    Ok(())
}

/// A server of `web/` on 127.0.0.1: the first free port from `port` on (0: any).
///
/// Static files over HTTP/1.1, one request per connection, each connection on its own thread
/// with a read timeout. (The page loads its ES modules over parallel connections; with
/// `tiny_http`, now and then two of those requests were never answered and the page never
/// finished loading, with keep-alive or without.)
pub struct Server {
    listener: std::net::TcpListener,
    pub url: String,
}

impl Server {
    pub fn bind(port: u16) -> Result<Server, String> {
        let ports: Vec<u16> = if port == 0 {
            vec![0]
        } else {
            (port..port.saturating_add(20)).collect()
        };
        for p in ports {
            if let Ok(listener) = std::net::TcpListener::bind(("127.0.0.1", p)) {
                let addr = listener.local_addr().map_err(|e| e.to_string())?;
                return Ok(Server {
                    listener,
                    url: format!("http://{addr}/"),
                });
            }
        }
        Err(format!(
            "no free port in {port}..{}",
            port.saturating_add(20)
        ))
    }

    /// Answers requests until the process ends.
    pub fn serve(self) {
        let web = root().join("web");
        for stream in self.listener.incoming().flatten() {
            let web = web.clone();
            std::thread::spawn(move || {
                let _ = answer(&web, stream);
            });
        }
    }

    /// Serves on a background thread.
    pub fn spawn(self) -> String {
        let url = self.url.clone();
        std::thread::spawn(move || self.serve());
        url
    }
}

/// The headers that make the page cross-origin isolated, as HTTP header lines.
const ISOLATION: &str =
    "Cross-Origin-Opener-Policy: same-origin\r\nCross-Origin-Embedder-Policy: require-corp\r\n";

/// Reads one request from `stream` and answers it: the file it names, or 404.
fn answer(web: &Path, mut stream: std::net::TcpStream) -> std::io::Result<()> {
    use std::io::{Read, Write};
    // A connection the browser opened ahead and never used times out instead of holding a thread.
    stream.set_read_timeout(Some(std::time::Duration::from_secs(30)))?;
    let mut head = Vec::new();
    let mut buffer = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buffer)?;
        if n == 0 || head.len() > 64 << 10 {
            return Ok(());
        }
        head.extend_from_slice(&buffer[..n]);
    }
    let line = String::from_utf8_lossy(&head);
    let mut words = line.split_whitespace();
    let (method, url) = (words.next().unwrap_or(""), words.next().unwrap_or("/"));
    let file = (method == "GET" || method == "HEAD")
        .then(|| resolve(web, url))
        .flatten()
        .and_then(|path| std::fs::read(&path).ok().map(|bytes| (path, bytes)));
    let (status, kind, body) = match file {
        Some((path, bytes)) => ("200 OK", content_type(&path), bytes),
        None => ("404 Not Found", "text/plain", b"not found".to_vec()),
    };
    // Cross-origin isolation (COOP and COEP): the page's workers may then share one copy of the
    // data in a SharedArrayBuffer.
    let header = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nCache-Control: no-cache\r\n{ISOLATION}Connection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(header.as_bytes())?;
    if method != "HEAD" {
        stream.write_all(&body)?;
    }
    stream.flush()?;
    stream.shutdown(std::net::Shutdown::Write)?;
    // Closing with unread bytes would reset the connection and could cut the response: drain
    // until the browser closes its side.
    stream.set_read_timeout(Some(std::time::Duration::from_secs(5)))?;
    while stream.read(&mut buffer)? > 0 {}
    Ok(())
}

/// The file a URL names under `web` (`/` is `index.html`); None for anything outside `web` or
/// inside `node_modules`.
fn resolve(web: &Path, url: &str) -> Option<PathBuf> {
    let path = url.split(['?', '#']).next().unwrap_or("/");
    let rel = path.trim_start_matches('/');
    let rel = if rel.is_empty() { "index.html" } else { rel };
    if rel
        .split('/')
        .any(|part| part == ".." || part.is_empty() || part == "node_modules")
    {
        return None;
    }
    let full = web.join(rel);
    full.is_file().then_some(full)
}

fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "wasm" => "application/wasm",
        "json" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        _ => "application/octet-stream",
    }
}
