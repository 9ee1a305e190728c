//! Tests of the effect ledger (`ledger.rs`): how each open intent is settled, what is not a
//! record (a torn last line, a line without this user's seal), the resend, and compaction.

use std::fs;
use std::path::Path;

use super::ledger::{Intent, LEDGER, Settled};
use super::tests::tempdir;
use super::*;

fn project() -> (tempdir::Dir, Journal) {
    let dir = tempdir::Dir::new();
    fs::write(dir.path().join("a.cairn"), "fn a() {}\n").unwrap();
    fs::write(dir.path().join("b.cairn"), "fn b() {}\n").unwrap();
    let journal = Journal::new(dir.path());
    (dir, journal)
}

fn changes() -> Vec<FileChange> {
    vec![
        FileChange {
            name: "a.cairn".into(),
            before: "fn a() {}\n".into(),
            after: "fn a() { 1 }\n".into(),
            before_sha256: None,
        },
        FileChange {
            name: "b.cairn".into(),
            before: "fn b() {}\n".into(),
            after: "fn b() { 2 }\n".into(),
            before_sha256: None,
        },
    ]
}

fn intent(key: &str, session: &str) -> Intent {
    Intent { key: key.into(), session: session.into(), handle: "e1".into(), answer: serde_json::json!({"key": key}) }
}

/// Appends an intent and nothing else, as a writer killed right after it leaves the ledger.
fn leave_open(journal: &Journal, intent: &Intent, changes: &[FileChange]) {
    let (open, _lock) = journal.lock().unwrap();
    let mut ledger = ledger::read(&open).unwrap();
    ledger::intend(&open, &mut ledger, intent, changes, &super::digests(changes)).unwrap();
}

/// Writes `text` over a file from its start, in the same inode (no truncation).
fn overwrite_in_place(path: &Path, text: &str) {
    use std::io::Write;
    let mut file = fs::OpenOptions::new().write(true).open(path).unwrap();
    file.write_all(text.as_bytes()).unwrap();
}

fn ledger_text(dir: &Path) -> String {
    fs::read_to_string(dir.join(".cairn").join(LEDGER)).unwrap_or_default()
}

#[test]
fn a_recorded_write_completes_and_its_resend_is_answered_from_the_ledger() {
    let (dir, journal) = project();
    let written = journal.write_recorded(&changes(), &intent("k", "s")).unwrap();
    assert!(matches!(written, Recorded::Written { ledger: 2, .. }), "{written:?}");
    assert_eq!(journal.settled("k").unwrap(), Some(Settled::Complete(serde_json::json!({"key": "k"}))));
    // The resend: not written again, even though the bases no longer match.
    assert_eq!(
        journal.write_recorded(&changes(), &intent("k", "s")).unwrap(),
        Recorded::Earlier(serde_json::json!({"key": "k"}))
    );
    let kinds: Vec<String> = ledger_text(dir.path())
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["kind"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(kinds, ["intent", "complete"]);
}

#[test]
fn a_refused_write_is_recorded_as_not_applied() {
    let (dir, journal) = project();
    fs::write(dir.path().join("b.cairn"), "fn b() { saved }\n").unwrap();
    let refused = journal.write_recorded(&changes(), &intent("k", "s"));
    assert_eq!(refused, Err(WriteError::Changed(vec!["b.cairn".into()])));
    assert_eq!(journal.settled("k").unwrap(), Some(Settled::NotApplied));
    assert_eq!(read_a(dir.path()), "fn a() {}\n");
}

fn read_a(dir: &Path) -> String {
    fs::read_to_string(dir.join("a.cairn")).unwrap()
}

#[test]
fn open_intents_are_settled_by_what_the_files_hold() {
    // All after: complete. All before: not applied. Mixed, or a file at neither: escalated.
    let cases: [(&str, &str, Settled); 4] = [
        ("fn a() { 1 }\n", "fn b() { 2 }\n", Settled::Complete(serde_json::json!({"key": "k"}))),
        ("fn a() {}\n", "fn b() {}\n", Settled::NotApplied),
        ("fn a() { 1 }\n", "fn b() {}\n", Settled::Escalated(vec!["a.cairn".into(), "b.cairn".into()])),
        ("fn a() { 1 }\n", "fn b() { saved }\n", Settled::Escalated(vec!["b.cairn".into()])),
    ];
    for (a, b, expected) in cases {
        let (dir, journal) = project();
        leave_open(&journal, &intent("k", "s"), &changes());
        assert_eq!(journal.settled("k").unwrap(), Some(Settled::Open), "read-only, nothing settles");
        fs::write(dir.path().join("a.cairn"), a).unwrap();
        fs::write(dir.path().join("b.cairn"), b).unwrap();
        let settled = journal.recover_sessions(&["s".into()], 0).unwrap();
        assert_eq!(settled, [("s".to_string(), "k".to_string(), expected.clone())]);
        // Nothing was touched, and the settling record is durable: a second recovery agrees.
        assert_eq!((read_a(dir.path()), fs::read_to_string(dir.path().join("b.cairn")).unwrap()), (a.into(), b.into()));
        assert_eq!(journal.settled("k").unwrap(), Some(expected));
    }
}

#[test]
fn any_writer_settles_what_a_dead_writer_left_open() {
    let (dir, journal) = project();
    leave_open(&journal, &intent("k", "s"), &changes());
    // An unrecorded write (`cairn undo`'s kind) takes the lock and settles it first.
    journal
        .write(&[FileChange {
            name: "a.cairn".into(),
            before: "fn a() {}\n".into(),
            after: "x\n".into(),
            before_sha256: None,
        }])
        .unwrap();
    assert_eq!(journal.settled("k").unwrap(), Some(Settled::NotApplied));
    assert_eq!(read_a(dir.path()), "x\n");
}

#[test]
fn a_torn_last_line_and_unsealed_lines_are_not_records() {
    let (dir, journal) = project();
    journal.write_recorded(&changes(), &intent("k", "s")).unwrap();
    let path = dir.path().join(".cairn").join(LEDGER);
    let mut text = ledger_text(dir.path());
    // A planted record (a valid shape, but not sealed by this user) and a torn tail.
    text.push_str(r#"{"schema":"cairn.ledger/1","seq":9,"kind":"complete","key":"planted","mac":"00"}"#);
    text.push('\n');
    text.push_str(r#"{"schema":"cairn.ledger/1","seq":10,"kind":"int"#);
    fs::write(&path, &text).unwrap();
    assert_eq!(journal.settled("planted").unwrap(), None, "an unsealed record is no record");
    // The next append cuts the torn tail; every line is whole JSON again.
    let restore = vec![
        FileChange {
            name: "a.cairn".into(),
            before: "fn a() { 1 }\n".into(),
            after: "fn a() {}\n".into(),
            before_sha256: None,
        },
        FileChange {
            name: "b.cairn".into(),
            before: "fn b() { 2 }\n".into(),
            after: "fn b() {}\n".into(),
            before_sha256: None,
        },
    ];
    journal.write_recorded(&restore, &intent("k2", "s")).unwrap();
    for line in ledger_text(dir.path()).lines() {
        serde_json::from_str::<serde_json::Value>(line).unwrap_or_else(|e| panic!("{line}: {e}"));
    }
    assert_eq!(journal.settled("k2").unwrap(), Some(Settled::Complete(serde_json::json!({"key": "k2"}))));
}

#[test]
fn a_long_ledger_is_compacted_and_keeps_the_newest_keys() {
    let (dir, journal) = project();
    let big = "x".repeat(40_000);
    let mut before = "fn a() {}\n".to_string();
    for i in 0..20 {
        let after = format!("fn a() {{ {i} }}\n");
        let change = FileChange {
            name: "a.cairn".into(),
            before: before.clone().into(),
            after: after.clone().into(),
            before_sha256: None,
        };
        let intent = Intent {
            key: format!("k{i}"),
            session: "s".into(),
            handle: "e1".into(),
            answer: serde_json::json!({"pad": big}),
        };
        journal.write_recorded(&[change], &intent).unwrap();
        before = after;
    }
    let size = ledger_text(dir.path()).len();
    assert!(size < 600 << 10, "compacted: {size} bytes");
    assert!(matches!(journal.settled("k19").unwrap(), Some(Settled::Complete(_))), "the newest key is kept");
    assert_eq!(journal.settled("k0").unwrap(), None, "the oldest went");
    // Sequence numbers go on rising after compaction.
    let seqs: Vec<u64> = ledger_text(dir.path())
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["seq"].as_u64().unwrap())
        .collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");
    assert_eq!(seqs.last(), Some(&40));
}

/// A ledger this process read before is read from where it was left (`ledger::read`): what
/// another writer appended since is found, and a file changed otherwise than by appending is
/// read whole.
#[test]
fn a_remembered_ledger_sees_what_another_writer_appended() {
    let (_dir, journal) = project();
    journal.write_recorded(&changes(), &intent("k1", "s")).unwrap();
    let (open, _lock) = journal.lock().unwrap();
    // Two readers at once: the first takes what is remembered, the second reads the file whole.
    let stale = ledger::read(&open).unwrap();
    let mut other = ledger::read(&open).unwrap();
    let reversed: Vec<FileChange> = changes()
        .into_iter()
        .map(|c| FileChange { name: c.name, before: c.after, after: c.before, before_sha256: None })
        .collect();
    ledger::intend(&open, &mut other, &intent("k2", "s2"), &reversed, &super::digests(&reversed)).unwrap();
    drop(other);
    // The stale reader is remembered last: the next read starts from where it stopped.
    drop(stale);
    let now = ledger::read(&open).unwrap();
    assert_eq!(now.settled("k2"), Some(Settled::Open), "the other writer's intent is found");
    assert_eq!(now.settled("k1"), Some(Settled::Complete(serde_json::json!({"key": "k1"}))));
    assert_eq!(now.records.iter().map(|r| r.seq).collect::<Vec<_>>(), [1, 2, 3]);
}

#[test]
fn a_ledger_rewritten_in_place_is_read_whole_again() {
    let (dir, journal) = project();
    journal.write_recorded(&changes(), &intent("k", "s")).unwrap();
    assert_eq!(journal.settled("k").unwrap(), Some(Settled::Complete(serde_json::json!({"key": "k"}))));
    // The same inode and length, but its last line (the `complete`) blanked out in place.
    let path = dir.path().join(".cairn").join(LEDGER);
    let text = fs::read_to_string(&path).unwrap();
    let first = text.find('\n').unwrap() + 1;
    let blanked = format!("{}{}\n", &text[..first], " ".repeat(text.len() - first - 1));
    assert_eq!(blanked.len(), text.len());
    let ino = std::os::unix::fs::MetadataExt::ino(&fs::metadata(&path).unwrap());
    overwrite_in_place(&path, &blanked);
    assert_eq!(std::os::unix::fs::MetadataExt::ino(&fs::metadata(&path).unwrap()), ino);
    assert_eq!(journal.settled("k").unwrap(), Some(Settled::Open), "the blanked record is no longer read");
    // Cut shorter than what was read: read whole too.
    fs::write(&path, "").unwrap();
    assert_eq!(journal.settled("k").unwrap(), None);
}

#[test]
fn a_recorded_write_leaves_pruning_to_tidy_which_keeps_a_spare_entry() {
    let (dir, journal) = project();
    let journal_dir = dir.path().join(".cairn").join("journal");
    let reversed: Vec<FileChange> = changes()
        .into_iter()
        .map(|c| FileChange { name: c.name, before: c.after, after: c.before, before_sha256: None })
        .collect();
    for n in 0..70 {
        let step = if n % 2 == 0 { changes() } else { reversed.clone() };
        journal.write_recorded(&step, &intent(&format!("k{n}"), "s")).unwrap();
    }
    let entries = || {
        fs::read_dir(&journal_dir)
            .unwrap()
            .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().ends_with(".write.json"))
            .count()
    };
    assert_eq!(entries(), 70, "a recorded write prunes nothing itself");
    // The committed marker is a second name of the entry's file.
    let ino = |name: &str| std::os::unix::fs::MetadataExt::ino(&fs::metadata(journal_dir.join(name)).unwrap());
    assert_eq!(ino("00000070.committed"), ino("00000070.write.json"));
    journal.tidy().unwrap();
    assert_eq!(entries(), 64);
    assert!(!journal_dir.join("00000006.write.json").exists() && journal_dir.join("00000007.write.json").exists());
    let spare = ino("spare");
    assert_eq!(fs::metadata(journal_dir.join("spare")).unwrap().len(), 0);
    journal.write_recorded(&changes(), &intent("k70", "s")).unwrap();
    assert!(!journal_dir.join("spare").exists());
    assert_eq!(ino("00000071.write.json"), spare, "the next entry took the spare file");
    assert_eq!(list_kinds(dir.path()).len(), 142);
}

#[test]
fn a_writer_that_died_after_staging_leaves_nothing_once_settled() {
    let (dir, journal) = project();
    leave_open(&journal, &intent("k", "s"), &changes());
    for name in [".a.cairn.cairn-write", ".b.cairn.cairn-write"] {
        fs::write(dir.path().join(name), "staged").unwrap();
    }
    journal.recover().unwrap();
    assert_eq!(journal.settled("k").unwrap(), Some(Settled::NotApplied));
    assert!(!dir.path().join(".a.cairn.cairn-write").exists() && !dir.path().join(".b.cairn.cairn-write").exists());
}

fn list_kinds(dir: &Path) -> Vec<String> {
    ledger_text(dir)
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["kind"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_ledger_whose_first_line_changed_in_place_is_read_whole_again() {
    let (dir, journal) = project();
    journal.write_recorded(&changes(), &intent("k", "s")).unwrap();
    assert_eq!(journal.settled("k").unwrap(), Some(Settled::Complete(serde_json::json!({"key": "k"}))));
    // The first line (the intent) blanked in place; the last line and the length stay.
    let path = dir.path().join(".cairn").join(LEDGER);
    let text = fs::read_to_string(&path).unwrap();
    let first = text.find('\n').unwrap();
    let blanked = format!("{}{}", " ".repeat(first), &text[first..]);
    overwrite_in_place(&path, &blanked);
    assert_eq!(fs::read_to_string(&path).unwrap().len(), text.len());
    // Without its intent, the `complete` has no answer to give.
    assert_eq!(journal.settled("k").unwrap(), None);
}
