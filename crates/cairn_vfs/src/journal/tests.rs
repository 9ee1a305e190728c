//! Tests of the journal: write-back and undo, recovery, and the attacks of a repository that
//! plants links and journal entries (docs/security.md).

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::sync::Arc;

use super::entry::{Entry, EntryFile, SCHEMA};
use super::*;

fn project() -> (tempdir::Dir, Journal) {
    let dir = tempdir::Dir::new();
    fs::write(dir.path().join("a.cairn"), "fn a() {}\n").unwrap();
    fs::create_dir_all(dir.path().join("src")).unwrap();
    fs::write(dir.path().join("src/b.cairn"), "fn b() {}\n").unwrap();
    let journal = Journal::new(dir.path());
    (dir, journal)
}

fn change(name: &str, before: &str, after: &str) -> FileChange {
    FileChange { name: name.into(), before: before.into(), after: after.into(), before_sha256: None }
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_default()
}

fn entries_dir(dir: &Path) -> std::path::PathBuf {
    dir.join(".cairn/journal")
}

/// Leaves a pending entry the way a crash of this user's toolchain would (sealed with the user's
/// key): the attacks below plant entries that are sealed too, to show that every other check
/// holds on its own; unsealed ones are [`plant_unsealed`].
fn plant_entry(dir: &Path, seq: u64, files: &[(&str, &str, &str)], marker: Option<&str>) {
    plant(dir, seq, files, marker, true);
}

/// Plants an entry as a repository could ship it: not sealed with this user's key.
fn plant_unsealed(dir: &Path, seq: u64, files: &[(&str, &str, &str)], marker: Option<&str>) {
    plant(dir, seq, files, marker, false);
}

fn plant(dir: &Path, seq: u64, files: &[(&str, &str, &str)], marker: Option<&str>, sealed: bool) {
    let entries = entries_dir(dir);
    fs::create_dir_all(&entries).unwrap();
    let files: Vec<EntryFile> = files
        .iter()
        .enumerate()
        .map(|(i, (name, before, after))| {
            fs::write(entries.join(format!("{seq:08}.{i}.before")), before).unwrap();
            EntryFile {
                name: (*name).into(),
                before_sha256: sha256(before.as_bytes()),
                after_sha256: sha256(after.as_bytes()),
            }
        })
        .collect();
    let mut entry = Entry { schema: SCHEMA.into(), seq, files, mac: String::new() };
    if sealed {
        entry.seal().unwrap();
    }
    fs::write(entries.join(format!("{seq:08}.write.json")), serde_json::to_string(&entry).unwrap()).unwrap();
    if let Some(marker) = marker {
        fs::write(entries.join(format!("{seq:08}.{marker}")), "").unwrap();
    }
}

#[test]
fn a_write_changes_every_file_and_undo_restores_them() {
    let (dir, journal) = project();
    let changes =
        [change("a.cairn", "fn a() {}\n", "fn a() { }\n"), change("src/b.cairn", "fn b() {}\n", "fn b() { }\n")];
    assert_eq!(journal.write(&changes), Ok(1));
    assert_eq!(read(&dir.path().join("a.cairn")), "fn a() { }\n");
    assert_eq!(read(&dir.path().join("src/b.cairn")), "fn b() { }\n");
    let undone = journal.undo().unwrap();
    assert_eq!(undone.seq, 1);
    assert_eq!(read(&dir.path().join("a.cairn")), "fn a() {}\n");
    assert_eq!(read(&dir.path().join("src/b.cairn")), "fn b() {}\n");
    assert_eq!(journal.undo(), Err(WriteError::NothingToUndo));
    // No temporary file is left beside the sources.
    let names: Vec<String> =
        fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into()).collect();
    assert!(names.iter().all(|n| !n.ends_with(".cairn-write")), "{names:?}");
}

#[test]
fn a_write_keeps_the_file_mode() {
    use std::os::unix::fs::PermissionsExt;
    let (dir, journal) = project();
    fs::set_permissions(dir.path().join("a.cairn"), fs::Permissions::from_mode(0o640)).unwrap();
    journal.write(&[change("a.cairn", "fn a() {}\n", "x\n")]).unwrap();
    assert_eq!(fs::metadata(dir.path().join("a.cairn")).unwrap().permissions().mode() & 0o777, 0o640);
}

#[test]
fn a_changed_base_refuses_the_whole_write() {
    let (dir, journal) = project();
    fs::write(dir.path().join("src/b.cairn"), "fn b() { /* saved */ }\n").unwrap();
    let changes =
        [change("a.cairn", "fn a() {}\n", "fn a() { }\n"), change("src/b.cairn", "fn b() {}\n", "fn b() { }\n")];
    assert_eq!(journal.write(&changes), Err(WriteError::Changed(vec!["src/b.cairn".into()])));
    assert_eq!(read(&dir.path().join("a.cairn")), "fn a() {}\n");
}

#[test]
fn undo_refuses_when_a_file_changed_after_the_write() {
    let (dir, journal) = project();
    journal.write(&[change("a.cairn", "fn a() {}\n", "fn a() { }\n")]).unwrap();
    fs::write(dir.path().join("a.cairn"), "fn a() { edited(); }\n").unwrap();
    assert_eq!(journal.undo(), Err(WriteError::Changed(vec!["a.cairn".into()])));
    assert_eq!(read(&dir.path().join("a.cairn")), "fn a() { edited(); }\n");
}

#[test]
fn an_in_place_save_after_the_write_makes_undo_refuse() {
    let (dir, journal) = project();
    journal.write(&[change("a.cairn", "fn a() {}\n", "fn a() { }\n")]).unwrap();
    // An editor that writes into the same inode (no rename).
    let mut file = OpenOptions::new().write(true).truncate(true).open(dir.path().join("a.cairn")).unwrap();
    file.write_all(b"fn a() { saved(); }\n").unwrap();
    drop(file);
    assert_eq!(journal.undo(), Err(WriteError::Changed(vec!["a.cairn".into()])));
    assert_eq!(read(&dir.path().join("a.cairn")), "fn a() { saved(); }\n");
}

#[test]
fn undo_walks_back_through_write_backs_in_order() {
    let (dir, journal) = project();
    journal.write(&[change("a.cairn", "fn a() {}\n", "one\n")]).unwrap();
    journal.write(&[change("a.cairn", "one\n", "two\n")]).unwrap();
    journal.undo().unwrap();
    assert_eq!(read(&dir.path().join("a.cairn")), "one\n");
    journal.undo().unwrap();
    assert_eq!(read(&dir.path().join("a.cairn")), "fn a() {}\n");
}

#[test]
fn a_torn_pending_entry_is_rolled_back_on_recovery() {
    let (dir, journal) = project();
    // What a crash after the first of two swaps leaves: a pending entry, one file moved.
    plant_entry(
        dir.path(),
        1,
        &[("a.cairn", "fn a() {}\n", "new a\n"), ("src/b.cairn", "fn b() {}\n", "new b\n")],
        None,
    );
    fs::write(dir.path().join("a.cairn"), "new a\n").unwrap();
    // The read-only view already shows what recovery will leave, and writes nothing.
    assert_eq!(journal.pending_view().unwrap(), vec![("a.cairn".to_string(), b"fn a() {}\n".to_vec())]);
    assert_eq!(read(&dir.path().join("a.cairn")), "new a\n");
    let recovered = journal.recover().unwrap();
    assert_eq!(
        recovered,
        vec![Recovered { seq: 1, outcome: Outcome::RolledBack, restored: vec!["a.cairn".into()], foreign: vec![] }]
    );
    assert_eq!(read(&dir.path().join("a.cairn")), "fn a() {}\n");
    assert_eq!(read(&dir.path().join("src/b.cairn")), "fn b() {}\n");
    // Nothing is left to undo: the interrupted write never happened.
    assert_eq!(journal.undo(), Err(WriteError::NothingToUndo));
    assert_eq!(journal.pending_view().unwrap(), vec![]);
}

#[test]
fn a_pending_entry_whose_files_all_moved_is_completed() {
    let (dir, journal) = project();
    plant_entry(dir.path(), 1, &[("a.cairn", "fn a() {}\n", "new a\n")], None);
    fs::write(dir.path().join("a.cairn"), "new a\n").unwrap();
    assert_eq!(journal.pending_view().unwrap(), vec![]);
    let recovered = journal.recover().unwrap();
    assert_eq!(recovered[0].outcome, Outcome::Completed);
    assert_eq!(read(&dir.path().join("a.cairn")), "new a\n");
    // A completed write is a write like any other: undo reverts it.
    assert_eq!(journal.undo().map(|u| u.seq), Ok(1));
    assert_eq!(read(&dir.path().join("a.cairn")), "fn a() {}\n");
}

#[test]
fn names_outside_the_root_are_refused() {
    let (_dir, journal) = project();
    for name in ["../x", "/etc/passwd", "a/../../x", "", "a//b", "./a.cairn", "a\\b"] {
        assert!(matches!(journal.write(&[change(name, "", "y")]), Err(WriteError::Io(_))), "{name}");
    }
}

// ----- attacks (issue 11: D1, D2, D4, D8) ----------------------------------------------------

#[test]
fn a_planted_staging_link_never_redirects_the_write() {
    let (dir, journal) = project();
    let outside = tempdir::Dir::new();
    fs::write(outside.path().join("target"), "outside\n").unwrap();
    symlink(outside.path().join("target"), dir.path().join(".a.cairn.cairn-write")).unwrap();
    journal.write(&[change("a.cairn", "fn a() {}\n", "new\n")]).unwrap();
    assert_eq!(read(&outside.path().join("target")), "outside\n");
    assert_eq!(read(&dir.path().join("a.cairn")), "new\n");
    assert!(!fs::symlink_metadata(dir.path().join("a.cairn")).unwrap().file_type().is_symlink());
}

#[test]
fn a_write_through_a_symlinked_directory_is_refused() {
    let (dir, journal) = project();
    let outside = tempdir::Dir::new();
    fs::write(outside.path().join("x.cairn"), "").unwrap();
    symlink(outside.path(), dir.path().join("d")).unwrap();
    assert!(matches!(journal.write(&[change("d/x.cairn", "", "pwned")]), Err(WriteError::Io(_))));
    assert_eq!(read(&outside.path().join("x.cairn")), "");
}

#[test]
fn a_symlinked_file_is_not_written() {
    let (dir, journal) = project();
    let outside = tempdir::Dir::new();
    fs::write(outside.path().join("x.cairn"), "fn a() {}\n").unwrap();
    fs::remove_file(dir.path().join("a.cairn")).unwrap();
    symlink(outside.path().join("x.cairn"), dir.path().join("a.cairn")).unwrap();
    assert!(matches!(journal.write(&[change("a.cairn", "fn a() {}\n", "pwned")]), Err(WriteError::Io(_))));
    assert_eq!(read(&outside.path().join("x.cairn")), "fn a() {}\n");
}

#[test]
fn a_planted_pending_entry_through_a_link_is_quarantined_not_applied() {
    let (dir, journal) = project();
    let outside = tempdir::Dir::new();
    fs::write(outside.path().join("x.cairn"), "").unwrap();
    symlink(outside.path(), dir.path().join("d")).unwrap();
    // A pending entry that would "roll back" d/x (at its after content, empty) to attacker text.
    plant_entry(dir.path(), 1, &[("d/x.cairn", "attacker text\n", "")], None);
    assert_eq!(journal.pending_view().unwrap(), vec![], "a bad entry changes nothing in the view");
    let recovered = journal.recover().unwrap();
    assert!(matches!(recovered[0].outcome, Outcome::Quarantined(_)), "{recovered:?}");
    assert_eq!(read(&outside.path().join("x.cairn")), "");
    // Once quarantined it stays inert: writes go on.
    journal.write(&[change("a.cairn", "fn a() {}\n", "ok\n")]).unwrap();
    assert_eq!(read(&outside.path().join("x.cairn")), "");
}

#[test]
fn a_planted_committed_entry_never_makes_undo_write_outside() {
    let (dir, journal) = project();
    let outside = tempdir::Dir::new();
    fs::write(outside.path().join("x.cairn"), "").unwrap();
    symlink(outside.path(), dir.path().join("d")).unwrap();
    plant_entry(dir.path(), 1, &[("d/x.cairn", "attacker text\n", "")], Some("committed"));
    assert!(matches!(journal.undo(), Err(WriteError::Io(_))));
    assert_eq!(read(&outside.path().join("x.cairn")), "");
    assert!(entries_dir(dir.path()).join("00000001.quarantined").exists());
    assert_eq!(journal.undo(), Err(WriteError::NothingToUndo));
}

#[test]
fn entries_with_bad_digests_names_or_kept_contents_are_quarantined() {
    let bad: [(&str, Box<dyn Fn(&Path)>); 4] = [
        (
            "a digest that is no SHA-256",
            Box::new(|dir: &Path| {
                let entries = entries_dir(dir);
                let text = fs::read_to_string(entries.join("00000001.write.json")).unwrap();
                let text = text.replacen("\"before_sha256\":\"", "\"before_sha256\":\"zz", 1);
                fs::write(entries.join("00000001.write.json"), text).unwrap();
            }),
        ),
        (
            "a kept content changed",
            Box::new(|dir: &Path| {
                fs::write(entries_dir(dir).join("00000001.0.before"), "other\n").unwrap();
            }),
        ),
        (
            "a kept content that is a link",
            Box::new(|dir: &Path| {
                let kept = entries_dir(dir).join("00000001.0.before");
                fs::remove_file(&kept).unwrap();
                symlink(dir.join("a.cairn"), kept).unwrap();
            }),
        ),
        (
            "a damaged entry",
            Box::new(|dir: &Path| {
                fs::write(entries_dir(dir).join("00000001.write.json"), "{\"schema\":").unwrap();
            }),
        ),
    ];
    for (what, spoil) in bad {
        let (dir, journal) = project();
        plant_entry(dir.path(), 1, &[("a.cairn", "fn a() {}\n", "new a\n")], None);
        fs::write(dir.path().join("a.cairn"), "torn?\n").unwrap();
        spoil(dir.path());
        let recovered = journal.recover().unwrap();
        assert!(matches!(recovered[0].outcome, Outcome::Quarantined(_)), "{what}: {recovered:?}");
        assert_eq!(read(&dir.path().join("a.cairn")), "torn?\n", "{what}");
    }
}

#[test]
fn a_symlinked_state_or_journal_directory_is_refused() {
    for planted in [".cairn", ".cairn/journal"] {
        let (dir, journal) = project();
        let outside = tempdir::Dir::new();
        if planted == ".cairn/journal" {
            fs::create_dir_all(dir.path().join(".cairn")).unwrap();
        }
        symlink(outside.path(), dir.path().join(planted)).unwrap();
        assert!(
            matches!(journal.write(&[change("a.cairn", "fn a() {}\n", "x\n")]), Err(WriteError::Io(_))),
            "{planted}"
        );
        assert!(matches!(journal.recover(), Err(WriteError::Io(_))), "{planted}");
        assert!(matches!(journal.pending_view(), Err(WriteError::Io(_))), "{planted}");
        assert_eq!(fs::read_dir(outside.path()).unwrap().count(), 0, "{planted}: nothing written outside");
        assert_eq!(read(&dir.path().join("a.cairn")), "fn a() {}\n");
    }
}

/// A write-back whose window an editor's save lands in: the write is reversed, the save kept,
/// the answer a conflict, and undo stays usable.
fn save_inside_the_window(point: &'static str, save: fn(&Path)) {
    let (dir, journal) = project();
    let path = dir.path().join("a.cairn");
    let journal = journal.with_hook(Arc::new(move |at: &str| {
        if at == point {
            save(&path);
        }
    }));
    let outcome = journal.write(&[change("a.cairn", "fn a() {}\n", "from the agent\n")]);
    assert_eq!(outcome, Err(WriteError::Conflict(vec!["a.cairn".into()])), "{point}");
    assert_eq!(read(&dir.path().join("a.cairn")), "fn a() { saved(); }\n", "{point}: the save is kept");
    assert_eq!(journal.undo(), Err(WriteError::NothingToUndo), "{point}");
    // And the next write-back against the saved content goes through.
    let journal = Journal::new(dir.path());
    journal.write(&[change("a.cairn", "fn a() { saved(); }\n", "next\n")]).unwrap();
    assert_eq!(journal.undo().map(|u| u.seq), Ok(2));
}

fn save_in_place(path: &Path) {
    let mut file = OpenOptions::new().write(true).truncate(true).open(path).unwrap();
    file.write_all(b"fn a() { saved(); }\n").unwrap();
}

fn save_by_rename(path: &Path) {
    let temporary = path.with_extension("swp");
    fs::write(&temporary, "fn a() { saved(); }\n").unwrap();
    fs::rename(&temporary, path).unwrap();
}

#[test]
fn an_in_place_save_inside_the_window_is_a_conflict_and_kept() {
    save_inside_the_window("before-swap", save_in_place);
    save_inside_the_window("stored", save_in_place);
}

#[test]
fn a_rename_save_inside_the_window_is_a_conflict_and_kept() {
    save_inside_the_window("before-swap", save_by_rename);
    save_inside_the_window("stored", save_by_rename);
}

#[test]
fn a_conflict_on_the_second_file_puts_the_first_back() {
    let (dir, journal) = project();
    let b = dir.path().join("src/b.cairn");
    let saves = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = saves.clone();
    let journal = journal.with_hook(Arc::new(move |at: &str| {
        // The second "before-swap" is the second file's.
        if at == "before-swap" && counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 1 {
            fs::write(&b, "fn b() { saved(); }\n").unwrap();
        }
    }));
    let changes = [change("a.cairn", "fn a() {}\n", "new a\n"), change("src/b.cairn", "fn b() {}\n", "new b\n")];
    assert_eq!(journal.write(&changes), Err(WriteError::Conflict(vec!["src/b.cairn".into()])));
    assert_eq!(read(&dir.path().join("a.cairn")), "fn a() {}\n");
    assert_eq!(read(&dir.path().join("src/b.cairn")), "fn b() { saved(); }\n");
    assert_eq!(journal.undo(), Err(WriteError::NothingToUndo));
}

#[test]
fn the_recovery_rule_completes_rolls_back_and_reports_foreign_files() {
    let entry = Entry {
        schema: SCHEMA.into(),
        seq: 1,
        files: ["a", "b"]
            .iter()
            .map(|n| EntryFile { name: (*n).into(), before_sha256: format!("{n}0"), after_sha256: format!("{n}1") })
            .collect(),
        mac: String::new(),
    };
    let at = |a: &str, b: &str| vec![Some(a.to_string()), Some(b.to_string())];
    assert_eq!(plan(&entry, &at("a1", "b1")), Plan::Complete);
    assert_eq!(plan(&entry, &at("a0", "b0")), Plan::RollBack { restore: vec![], foreign: vec![] });
    assert_eq!(plan(&entry, &at("a1", "b0")), Plan::RollBack { restore: vec![0], foreign: vec![] });
    assert_eq!(plan(&entry, &at("a1", "zz")), Plan::RollBack { restore: vec![0], foreign: vec![1] });
    assert_eq!(plan(&entry, &[None, Some("b1".into())]), Plan::RollBack { restore: vec![1], foreign: vec![0] });
}

/// A temporary directory removed on drop (std has none; a dependency would buy nothing).
pub(super) mod tempdir {
    use std::path::{Path, PathBuf};

    pub struct Dir(PathBuf);

    impl Dir {
        pub fn new() -> Dir {
            use std::sync::atomic::{AtomicU32, Ordering};
            static NEXT: AtomicU32 = AtomicU32::new(0);
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let path = std::env::temp_dir().join(format!("cairn-journal-{}-{n}", std::process::id()));
            let _ = std::fs::remove_dir_all(&path);
            std::fs::create_dir_all(&path).unwrap();
            // Canonical, as the hosts hand the journal its root.
            Dir(path.canonicalize().unwrap())
        }

        pub fn path(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

#[test]
fn an_entry_not_sealed_by_this_user_is_quarantined_and_never_read() {
    // What a repository could ship: a well-formed pending entry naming a real source, whose
    // recovery would "roll back" the file to the repository's text.
    let (dir, journal) = project();
    fs::write(dir.path().join("a.cairn"), "fn a() { benign(); }\n").unwrap();
    plant_unsealed(
        dir.path(),
        1,
        &[("a.cairn", "fn a() { evil(); }\n", "fn a() { benign(); }\n"), ("src/b.cairn", "x", "y")],
        None,
    );
    assert_eq!(journal.pending_view().unwrap(), vec![], "the view never reads it");
    let recovered = journal.recover().unwrap();
    assert!(matches!(&recovered[0].outcome, Outcome::Quarantined(why) if why.contains("seal")), "{recovered:?}");
    assert_eq!(read(&dir.path().join("a.cairn")), "fn a() { benign(); }\n");
}

#[test]
fn entries_may_name_only_program_sources() {
    let (dir, journal) = project();
    fs::create_dir_all(dir.path().join(".git")).unwrap();
    fs::write(dir.path().join(".git/config"), "[core]\n").unwrap();
    fs::write(dir.path().join("notes.txt"), "x").unwrap();
    for name in [".git/config", ".cairn/lock", "notes.txt", ".hidden.cairn", "a/.b/c.cairn"] {
        plant_entry(dir.path(), 1, &[(name, "evil\n", "[core]\n"), ("a.cairn", "x", "y")], None);
        let recovered = journal.recover().unwrap();
        assert!(matches!(recovered[0].outcome, Outcome::Quarantined(_)), "{name}: {recovered:?}");
        let _ = fs::remove_dir_all(dir.path().join(".cairn"));
        assert!(matches!(journal.write(&[change(name, "", "x")]), Err(WriteError::Io(_))), "{name}");
    }
    assert_eq!(read(&dir.path().join(".git/config")), "[core]\n");
}

#[test]
fn a_huge_kept_content_is_refused_before_it_is_read() {
    let (dir, journal) = project();
    plant_entry(dir.path(), 1, &[("a.cairn", "small\n", "fn a() {}\n"), ("src/b.cairn", "x", "y")], None);
    // Grow the kept content past the bound (sparse: costs no disk).
    let kept = dir.path().join(".cairn/journal/00000001.0.before");
    fs::OpenOptions::new().write(true).open(&kept).unwrap().set_len(40 << 20).unwrap();
    let recovered = journal.recover().unwrap();
    assert!(matches!(&recovered[0].outcome, Outcome::Quarantined(why) if why.contains("more than")), "{recovered:?}");
}

#[test]
fn a_save_after_the_first_swap_of_two_is_kept_when_the_second_conflicts() {
    let (dir, journal) = project();
    let a = dir.path().join("a.cairn");
    let b = dir.path().join("src/b.cairn");
    let swaps = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = swaps.clone();
    let journal = journal.with_hook(Arc::new(move |at: &str| {
        if at == "swapped" && counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
            // The editor saves a (which now holds the new content) in place, and b.
            fs::OpenOptions::new().write(true).truncate(true).open(&a).unwrap().write_all(b"a saved\n").unwrap();
            fs::write(&b, "b saved\n").unwrap();
        }
    }));
    let changes = [change("a.cairn", "fn a() {}\n", "new a\n"), change("src/b.cairn", "fn b() {}\n", "new b\n")];
    assert_eq!(journal.write(&changes), Err(WriteError::Conflict(vec!["a.cairn".into(), "src/b.cairn".into()])));
    assert_eq!(read(&dir.path().join("a.cairn")), "a saved\n", "the save of a is kept");
    assert_eq!(read(&dir.path().join("src/b.cairn")), "b saved\n");
}

#[test]
fn recovery_keeps_a_save_made_while_it_runs() {
    let (dir, journal) = project();
    plant_entry(
        dir.path(),
        1,
        &[("a.cairn", "fn a() {}\n", "new a\n"), ("src/b.cairn", "fn b() {}\n", "new b\n")],
        None,
    );
    fs::write(dir.path().join("a.cairn"), "new a\n").unwrap();
    let path = dir.path().join("a.cairn");
    let journal = journal.with_hook(Arc::new(move |at: &str| {
        if at == "before-swap" {
            fs::write(&path, "saved during recovery\n").unwrap();
        }
    }));
    let recovered = journal.recover().unwrap();
    assert_eq!(recovered[0].outcome, Outcome::RolledBack);
    assert_eq!(recovered[0].foreign, ["a.cairn"]);
    assert_eq!(read(&dir.path().join("a.cairn")), "saved during recovery\n");
}

#[test]
fn a_fifo_at_the_lock_never_hangs_a_reader_or_a_writer() {
    let (dir, journal) = project();
    plant_entry(dir.path(), 1, &[("a.cairn", "fn a() {}\n", "x\n"), ("src/b.cairn", "y", "z")], None);
    fs::remove_file(dir.path().join(".cairn/lock")).ok();
    let c_path = std::ffi::CString::new(dir.path().join(".cairn/lock").to_str().unwrap()).unwrap();
    // SAFETY: a valid path.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o644) }, 0);
    assert!(matches!(journal.pending_view(), Err(WriteError::Io(_))));
    assert!(matches!(journal.write(&[change("a.cairn", "fn a() {}\n", "b\n")]), Err(WriteError::Io(_))));
}

#[test]
fn an_exhausted_sequence_is_an_error_not_an_overflow() {
    let (dir, journal) = project();
    fs::create_dir_all(entries_dir(dir.path())).unwrap();
    fs::write(entries_dir(dir.path()).join("999999999999.write.json"), "{}").unwrap();
    fs::write(entries_dir(dir.path()).join("999999999999.quarantined"), "").unwrap();
    fs::write(entries_dir(dir.path()).join("18446744073709551615.write.json"), "{}").unwrap();
    assert!(
        matches!(journal.write(&[change("a.cairn", "fn a() {}\n", "b\n")]), Err(WriteError::Io(why)) if why.contains("exhausted"))
    );
    assert_eq!(read(&dir.path().join("a.cairn")), "fn a() {}\n");
}
