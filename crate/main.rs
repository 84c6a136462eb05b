//! The `distillrank` command line.

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args = match cli::parse_from(std::env::args_os()) {
        Ok(args) => args,
        // Under --json a usage error is a JSON object too; help and the version print as usual.
        Err(e) if e.use_stderr() && cli::asks_for_json(std::env::args_os()) => {
            // clap's first line, without its "error: " (the help hint after it is for a terminal).
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or_default();
            let object = serde_json::json!({
                "error": distillrank::error::printable(first.strip_prefix("error: ").unwrap_or(first)),
                "kind": "usage",
            });
            eprintln!("{object}");
            return ExitCode::from(e.exit_code().clamp(1, 255) as u8);
        }
        Err(e) => e.exit(),
    };
    let json = args.json;
    // Before any thread: it sets an environment variable.
    distillrank::native::quiet_gpu_probe();
    remove_unfinished_outputs_on_signals();
    match cli::check_utf8_arguments(std::env::args_os()).and_then(|()| cli::run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        // The reader of our output went away (`| head`): not an error.
        Err(distillrank::error::Error::Io { source, .. })
            if source.kind() == std::io::ErrorKind::BrokenPipe =>
        {
            ExitCode::SUCCESS
        }
        Err(e) if json => {
            eprintln!("{}", e.to_json());
            ExitCode::FAILURE
        }
        Err(e) => {
            // Messages may quote input: no raw control characters reach the terminal.
            eprintln!("error: {}", distillrank::error::printable(&e.to_string()));
            ExitCode::FAILURE
        }
    }
}

/// Ended by Ctrl-C, SIGTERM or SIGHUP mid-write, the command removes the temporary files of its
/// unfinished outputs (a signal runs no destructor), then ends by that signal, as it would have
/// without the handler: a shell's loop stops at Ctrl-C, and the status names the signal.
#[cfg(unix)]
fn remove_unfinished_outputs_on_signals() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        return;
    };
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            // Held until the process ends: nothing is staged after the removal.
            let _unfinished = distillrank::output::remove_unfinished();
            let _ = signal_hook::low_level::emulate_default_handler(signal);
            std::process::abort();
        }
    });
}

#[cfg(not(unix))]
fn remove_unfinished_outputs_on_signals() {}
