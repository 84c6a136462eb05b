//! The `distillrank` command line.

mod cli;

use std::process::ExitCode;

use clap::FromArgMatches;

fn main() -> ExitCode {
    let matches = cli::command().get_matches();
    let mut args = match cli::Cli::from_arg_matches(&matches) {
        Ok(args) => args,
        Err(e) => e.exit(),
    };
    args.given = cli::given_flags(&matches);
    cli::quiet_gpu_probe();
    match cli::run(args) {
        Ok(()) => ExitCode::SUCCESS,
        // The reader of our output went away (`| head`): not an error.
        Err(distillrank::Error::Io { source, .. })
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
