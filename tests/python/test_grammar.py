"""The editor grammars colour CAIRN without the server: every reserved word the lexer knows
(crates/cairn_syntax/src/syntax_kind.rs) is matched as a keyword by the VS Code grammar and the
Neovim syntax, comments and strings are scoped, and the extension manifest points at the grammar
it ships."""

import json
import pathlib
import re

REPO = pathlib.Path(__file__).resolve().parents[2]
EDITOR = REPO / "editors" / "vscode"


def grammar():
    return json.loads((EDITOR / "syntaxes" / "cairn.tmLanguage.json").read_text())


def reserved_words():
    source = (REPO / "crates" / "cairn_syntax" / "src" / "syntax_kind.rs").read_text()
    block = source[source.index("\n    keywords {\n"):]
    block = block[: block.index("}")]
    return re.findall(r'= "([a-z_]+)"', block)


def keyword_regexes():
    repository = grammar()["repository"]
    out = []
    for section in ("keywords", "types"):
        for pattern in repository[section]["patterns"]:
            out.append((pattern["name"], re.compile(pattern["match"])))
    return out


def test_every_reserved_word_is_a_keyword():
    words = reserved_words()
    assert len(words) > 40
    regexes = keyword_regexes()
    for word in words:
        scopes = [name for name, regex in regexes if regex.fullmatch(word)]
        assert scopes, f"{word} is not coloured"
        assert not any(s.startswith("entity.name") for s in scopes), f"{word} is coloured as a name"


def test_comments_and_strings_are_scoped():
    repository = grammar()["repository"]
    comment = re.compile(repository["comments"]["patterns"][0]["match"])
    assert comment.search("let x = 1; // the rest").group(0) == "// the rest"
    escape = re.compile(repository["strings"]["patterns"][0]["patterns"][0]["match"])
    assert escape.fullmatch("\\x41") and escape.fullmatch("\\n")


def test_the_manifest_ships_the_grammar():
    manifest = json.loads((EDITOR / "package.json").read_text())
    [language] = manifest["contributes"]["languages"]
    assert language["extensions"] == [".cairn"]
    [entry] = manifest["contributes"]["grammars"]
    assert entry["scopeName"] == grammar()["scopeName"]
    assert (EDITOR / entry["path"]).is_file()
    assert (EDITOR / language["configuration"]).is_file()


def test_the_neovim_syntax_knows_every_reserved_word():
    syntax = (REPO / "editors" / "nvim" / "syntax" / "cairn.vim").read_text()
    keywords = set()
    for line in syntax.splitlines():
        if line.startswith("syntax keyword "):
            keywords.update(line.split()[3:])
    for word in reserved_words():
        assert word in keywords, f"{word} is not coloured in editors/nvim/syntax/cairn.vim"
