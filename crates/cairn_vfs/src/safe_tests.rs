//! Tests of the confined file operations (`safe.rs`): links never followed, special files
//! refused, names and exchanges, the block-wise comparison of a file with what it should hold,
//! and the replacement that reuses its staged file and the spare files the journal keeps.

use super::*;

fn scratch(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("cairn-safe-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn a_symlinked_directory_or_file_is_never_followed() {
    let dir = scratch("links");
    let outside = scratch("links-outside");
    std::fs::write(outside.join("x"), "secret").unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("d")).unwrap();
    std::os::unix::fs::symlink(outside.join("x"), dir.join("f")).unwrap();
    let root = Dir::root(&dir).unwrap();
    assert!(root.subdir("d", false).is_err());
    assert!(root.subdir("d", true).is_err());
    assert!(matches!(root.read_regular("f", 100), Err(ReadError::NotRegular(Kind::Symlink))));
    assert!(root.create_new("f", 0o644).is_err());
    // Removing the link removes the link, not what it points at.
    root.remove("f").unwrap();
    assert_eq!(std::fs::read_to_string(outside.join("x")).unwrap(), "secret");
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&outside);
}

#[test]
fn a_fifo_is_refused_without_blocking_and_a_limit_holds() {
    let dir = scratch("fifo");
    let c_path = CString::new(dir.join("p").as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid path.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o644) }, 0);
    std::fs::write(dir.join("big"), vec![b'a'; 100]).unwrap();
    let root = Dir::root(&dir).unwrap();
    assert!(matches!(root.read_regular("p", 100), Err(ReadError::NotRegular(Kind::Special))));
    assert!(matches!(root.read_regular("big", 99), Err(ReadError::TooLarge(100))));
    assert_eq!(root.read_regular("big", 100).unwrap().len(), 100);
    assert!(matches!(root.read_regular("none", 1), Err(ReadError::Missing)));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn names_list_and_exchange_swaps() {
    let dir = scratch("names");
    std::fs::write(dir.join("a"), "A").unwrap();
    std::fs::write(dir.join("b"), "B").unwrap();
    let root = Dir::root(&dir).unwrap();
    let mut names = root.names().unwrap();
    names.sort();
    assert_eq!(names, ["a", "b"]);
    if root.exchange("a", "b").unwrap() {
        assert_eq!(std::fs::read_to_string(dir.join("a")).unwrap(), "B");
    }
    assert!(root.stat("../x").is_err());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_file_is_compared_with_its_parts_across_block_boundaries() {
    let dir = scratch("holds");
    let root = Dir::root(&dir).unwrap();
    let body: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    let bom: &[u8] = b"\xEF\xBB\xBF";
    let whole = [bom, &body].concat();
    std::fs::write(dir.join("f"), &whole).unwrap();
    assert!(root.regular_holds_parts("f", &[bom, &body]).unwrap().0);
    assert!(root.regular_holds("f", &whole).unwrap().0);
    assert!(root.regular_holds_parts("f", &[&whole[..65_539], &whole[65_539..]]).unwrap().0);
    assert!(root.regular_holds_parts("f", &[&[], &whole, &[]]).unwrap().0);
    // One byte different anywhere, in either part, or a part too short or too long: no.
    for at in [0, 2, 3, 65_535, 65_536, 65_539, 131_072, whole.len() - 1] {
        let mut other = whole.clone();
        other[at] ^= 1;
        assert!(!root.regular_holds_parts("f", &[&other[..3], &other[3..]]).unwrap().0, "differs at {at}");
    }
    assert!(!root.regular_holds_parts("f", &[bom, &body[1..]]).unwrap().0);
    assert!(!root.regular_holds_parts("f", &[bom, &body, b"x"]).unwrap().0);
    assert!(matches!(root.regular_holds_parts("none", &[bom]), Err(ReadError::Missing)));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_reusing_replacement_swaps_in_place_and_never_writes_through_a_link() {
    let dir = scratch("reuse");
    let root = Dir::root(&dir).unwrap();
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
    root.replace_reusing("t", b"{\"a\":1000}", false, || {}).unwrap();
    assert_eq!(read("t"), "{\"a\":1000}");
    root.replace_reusing("t", b"{\"a\":2}", false, || {}).unwrap();
    assert_eq!(read("t"), "{\"a\":2}");
    assert_eq!(read("t.new"), "{\"a\":1000}", "the replaced content is kept as the next staging");
    let ino = |name: &str| std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(dir.join(name)).unwrap());
    let (first, second) = (ino("t"), ino("t.new"));
    // Shorter than what the staged file held: padded with spaces, still the same JSON.
    root.replace_reusing("t", b"{\"b\":30}", false, || {}).unwrap();
    assert_eq!(read("t"), "{\"b\":30}  ");
    assert_eq!(serde_json::from_str::<serde_json::Value>(&read("t")).unwrap(), serde_json::json!({"b": 30}));
    assert_eq!((ino("t"), ino("t.new")), (second, first), "no inode made or freed");
    // A synced replacement takes a fresh inode and leaves no staged file (whose older content
    // a later unsynced replacement could otherwise bring back after an OS crash).
    root.replace_reusing("t", b"{\"s\":1}", true, || {}).unwrap();
    assert_eq!(read("t"), "{\"s\":1}");
    assert!(!dir.join("t.new").exists());
    root.replace_reusing("t", b"{\"s\":2}", false, || {}).unwrap();
    root.replace_reusing("t", b"{\"s\":3}", false, || {}).unwrap();
    assert_eq!((read("t"), read("t.new")), ("{\"s\":3}".to_string(), "{\"s\":2}".to_string()));
    // Far shorter: cut instead.
    root.replace_reusing("t", b"[]", false, || {}).unwrap();
    root.replace_reusing("t", b"1", false, || {}).unwrap();
    assert!(read("t").len() <= 2, "{:?}", read("t"));
    // A planted second name of another file at the staging name is never written through.
    std::fs::write(dir.join("victim"), "keep").unwrap();
    std::fs::remove_file(dir.join("t.new")).unwrap();
    std::fs::hard_link(dir.join("victim"), dir.join("t.new")).unwrap();
    root.replace_reusing("t", b"{\"b\":3}", false, || {}).unwrap();
    assert_eq!(read("victim"), "keep");
    assert_eq!(read("t"), "{\"b\":3}");
    // Nor a planted symbolic link.
    std::fs::remove_file(dir.join("t.new")).unwrap();
    std::os::unix::fs::symlink(dir.join("victim"), dir.join("t.new")).unwrap();
    root.replace_reusing("t", b"{\"c\":4}", false, || {}).unwrap();
    assert_eq!(read("victim"), "keep");
    assert_eq!(read("t"), "{\"c\":4}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_spare_file_is_taken_only_when_it_is_an_empty_file_of_one_link() {
    let dir = scratch("spare");
    let root = Dir::root(&dir).unwrap();
    root.keep_spare("spare").unwrap();
    let spare = std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(dir.join("spare")).unwrap());
    let mut file = root.create_from_spare("spare", "one").unwrap();
    std::io::Write::write_all(&mut file, b"1").unwrap();
    assert_eq!(std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(dir.join("one")).unwrap()), spare);
    assert!(!dir.join("spare").exists());
    // No spare: made afresh. An existing name is never replaced by the spare.
    root.create_from_spare("spare", "two").unwrap();
    root.keep_spare("spare").unwrap();
    assert!(root.create_from_spare("spare", "one").is_err(), "one exists: created exclusively");
    assert_eq!(std::fs::read_to_string(dir.join("one")).unwrap(), "1");
    // A spare that is a second name of another file, or not empty, is not taken as it is.
    std::fs::remove_file(dir.join("spare")).unwrap();
    std::fs::hard_link(dir.join("one"), dir.join("spare")).unwrap();
    root.keep_spare("spare").unwrap();
    assert_eq!(std::fs::read_to_string(dir.join("one")).unwrap(), "1");
    assert_eq!(std::fs::metadata(dir.join("spare")).unwrap().len(), 0);
    std::fs::write(dir.join("spare"), "planted").unwrap();
    let mut three = root.create_from_spare("spare", "three").unwrap();
    std::io::Write::write_all(&mut three, b"3").unwrap();
    assert_eq!(std::fs::read_to_string(dir.join("three")).unwrap(), "3");
    let _ = std::fs::remove_dir_all(&dir);
}
