//! Prints a generated tier-0 program of about N lines (`generate LINES [SEED]`), for timing the
//! whole `cairn check` process on it from the shell.

fn main() {
    let mut args = std::env::args().skip(1);
    let lines: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(2_000);
    let seed: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(1);
    print!("{}", cairn_testgen::program(cairn_testgen::Config::with_lines(seed, lines)));
}
