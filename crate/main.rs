//! The `distillrank` command line.

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args = cli::parse_from(std::env::args_os()).unwrap_or_else(|e| e.exit());
    distillrank::native::quiet_gpu_probe();
    match cli::run(args) {
        Ok(()) => ExitCode::SUCCESS,
        // The reader of our output went away (`| head`): not an error.
        Err(distillrank::error::Error::Io { source, .. })
            if source.kind() == std::io::ErrorKind::BrokenPipe =>
        {
            ExitCode::SUCCESS
        }
        Err(e) => {
            // Messages may quote input: no raw control characters reach the terminal.
            eprintln!("error: {}", distillrank::error::printable(&e.to_string()));
            ExitCode::FAILURE
        }
    }
}
