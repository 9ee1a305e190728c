//! Prints a generated tier-0 program of about N lines (`generate LINES [SEED] [--chains]`), for
//! timing the whole `cairn check` process on it from the shell. `--chains` prints the second
//! generator's shape (`cairn_testgen::program_chains`: many small functions in deep call chains).

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let chains = args.iter().any(|a| a == "--chains");
    let mut numbers = args.iter().filter(|a| *a != "--chains");
    let lines: usize = numbers.next().and_then(|a| a.parse().ok()).unwrap_or(2_000);
    let seed: u64 = numbers.next().and_then(|a| a.parse().ok()).unwrap_or(1);
    if chains {
        print!("{}", cairn_testgen::program_chains(cairn_testgen::Config::chains_with_lines(seed, lines)));
    } else {
        print!("{}", cairn_testgen::program(cairn_testgen::Config::with_lines(seed, lines)));
    }
}
