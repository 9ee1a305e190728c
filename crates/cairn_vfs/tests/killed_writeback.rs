//! A write-back killed between two files (protocol §16.4; issue 5): every file is whole — before
//! or after, never torn — and the next journal user rolls the interrupted write back.
//!
//! The test runs itself again as the child that writes: with `CAIRN_JOURNAL_CHILD` set, the same
//! test writes into the directory it names, pausing after each renamed file through the journal's
//! test hook; the parent kills it with SIGKILL during the first pause.
//!
//! A recorded write-back (the effect ledger) is killed the same way at each of its named fault
//! points (`CAIRN_FAULT`), and recovery must say what the files say: not applied before the
//! last file's swap, complete from it on.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use cairn_vfs::journal::ledger::{Intent, Settled};
use cairn_vfs::journal::{FileChange, Journal, WriteError};

const A_BEFORE: &str = "fn a() -> u32 = 1;\n";
const A_AFTER: &str = "fn a() -> u32 = 2;\n";
const B_BEFORE: &str = "fn b() -> u32 = 3;\n";
const B_AFTER: &str = "fn b() -> u32 = 4;\n";

fn changes() -> Vec<FileChange> {
    vec![
        FileChange { name: "a.cairn".into(), before: A_BEFORE.into(), after: A_AFTER.into(), before_sha256: None },
        FileChange { name: "src/b.cairn".into(), before: B_BEFORE.into(), after: B_AFTER.into(), before_sha256: None },
    ]
}

/// The child half: writes both files into `dir` (the parent kills it before it finishes).
fn child_writes_two_files(dir: &Path) {
    let result = Journal::new(dir).write(&changes());
    // Only reached when nobody kills this process.
    assert!(result.is_ok(), "{result:?}");
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

#[test]
fn a_write_back_killed_between_files_is_rolled_back() {
    if let Some(dir) = std::env::var_os("CAIRN_JOURNAL_CHILD") {
        child_writes_two_files(Path::new(&dir));
        return;
    }
    let dir: PathBuf = std::env::temp_dir().join(format!("cairn-journal-kill-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("a.cairn"), A_BEFORE).unwrap();
    std::fs::write(dir.join("src/b.cairn"), B_BEFORE).unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "a_write_back_killed_between_files_is_rolled_back", "--nocapture"])
        .env("CAIRN_JOURNAL_CHILD", &dir)
        .env("CAIRN_WRITEBACK_PAUSE_MS", "10000")
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while read(&dir.join("a.cairn")) != A_AFTER {
        assert!(Instant::now() < deadline, "the child never renamed the first file");
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    // Between the two files: the first is after, the second before, each whole.
    assert_eq!(read(&dir.join("a.cairn")), A_AFTER);
    assert_eq!(read(&dir.join("src/b.cairn")), B_BEFORE);
    let journal = Journal::new(&dir);
    let recovered = journal.recover().unwrap();
    assert_eq!(recovered.len(), 1);
    assert_eq!(recovered[0].restored, ["a.cairn"]);
    assert_eq!(read(&dir.join("a.cairn")), A_BEFORE);
    assert_eq!(read(&dir.join("src/b.cairn")), B_BEFORE);
    assert_eq!(journal.undo(), Err(WriteError::NothingToUndo), "the interrupted write never happened");
    // No temporary file is left beside the sources.
    for entry in [dir.clone(), dir.join("src")] {
        for file in std::fs::read_dir(entry).unwrap() {
            let name = file.unwrap().file_name().to_string_lossy().to_string();
            assert!(!name.ends_with(".cairn-write"), "{name}");
        }
    }
    // And the journal still works.
    journal.write(&changes()).unwrap();
    assert_eq!(
        (read(&dir.join("a.cairn")), read(&dir.join("src/b.cairn"))),
        (A_AFTER.to_string(), B_AFTER.to_string())
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn intent() -> Intent {
    Intent {
        key: "k1".into(),
        session: "s1".into(),
        handle: "e1".into(),
        answer: serde_json::json!({"status": "typed"}),
    }
}

#[test]
fn a_recorded_write_back_killed_at_each_fault_point_is_settled_by_what_the_files_hold() {
    if let Some(dir) = std::env::var_os("CAIRN_LEDGER_CHILD") {
        let result = Journal::new(Path::new(&dir)).write_recorded(&changes(), &intent());
        assert!(result.is_ok(), "{result:?}");
        return;
    }
    // (fault, whether the write happened, whether the ledger holds the intent at all)
    let points: [(&str, bool, bool); 9] = [
        ("torn-ledger", false, false),
        ("after-intent", false, true),
        ("stored", false, true),
        ("before-swap", false, true),
        ("after-rename:1", false, true),
        ("between-files", false, true),
        ("after-rename:2", true, true),
        ("before-completion", true, true),
        ("after-completion", true, true),
    ];
    for (fault, happened, recorded) in points {
        let dir: PathBuf =
            std::env::temp_dir().join(format!("cairn-ledger-kill-{}-{}", fault.replace(':', "-"), std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(dir.join("a.cairn"), A_BEFORE).unwrap();
        std::fs::write(dir.join("src/b.cairn"), B_BEFORE).unwrap();
        let status = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "a_recorded_write_back_killed_at_each_fault_point_is_settled_by_what_the_files_hold"])
            .env("CAIRN_LEDGER_CHILD", &dir)
            .env("CAIRN_FAULT", fault)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(!status.success(), "{fault}: the child was killed");
        let (a, b) = (read(&dir.join("a.cairn")), read(&dir.join("src/b.cairn")));
        assert!(a == A_BEFORE || a == A_AFTER, "{fault}: a is torn");
        assert!(b == B_BEFORE || b == B_AFTER, "{fault}: b is torn");
        let journal = Journal::new(&dir);
        let settled = journal.recover_sessions(&["s1".to_string()], 0).unwrap();
        let (a, b) = (read(&dir.join("a.cairn")), read(&dir.join("src/b.cairn")));
        if happened {
            assert_eq!((a.as_str(), b.as_str()), (A_AFTER, B_AFTER), "{fault}");
            assert_eq!(settled, [("s1".to_string(), "k1".to_string(), Settled::Complete(intent().answer))], "{fault}");
        } else {
            assert_eq!((a.as_str(), b.as_str()), (A_BEFORE, B_BEFORE), "{fault}: rolled back");
            let expected: Vec<(String, String, Settled)> =
                if recorded { vec![("s1".into(), "k1".into(), Settled::NotApplied)] } else { vec![] };
            assert_eq!(settled, expected, "{fault}");
        }
        // The resend: a complete key is answered from the ledger and not written again; a key
        // not applied is written now.
        let outcome = journal.write_recorded(&changes(), &intent());
        match (happened, outcome) {
            (true, Ok(cairn_vfs::journal::Recorded::Earlier(answer))) => assert_eq!(answer, intent().answer),
            (false, Ok(cairn_vfs::journal::Recorded::Written { .. })) => {}
            (_, other) => panic!("{fault}: the resend answered {other:?}"),
        }
        assert_eq!(
            (read(&dir.join("a.cairn")), read(&dir.join("src/b.cairn"))),
            (A_AFTER.to_string(), B_AFTER.to_string())
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
