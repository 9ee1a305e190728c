"""End-to-end: `cairn lsp` driven by pytest-lsp, a real LSP client (pygls) from PyPI.

Run by crates/cairn_cli/tests/lsp.rs with CAIRN_BIN naming the binary under test. Each test opens
documents the way an editor does and checks what comes back: coded diagnostics that an
incremental change clears, hover with the effect row, definitions across a project, references,
symbols, semantic tokens, quick fixes (`let mut`, the missing arms of a `match`, the import of an
unknown type), variants, binders and tests in hover, definition and tokens, a project file opened
second, a manifest that does not load, and errors (not crashes) for what a server cannot answer.
"""

import asyncio
import os
import pathlib
import shutil
import tempfile

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

CAIRN = os.environ.get("CAIRN_BIN", "cairn")
REPO = pathlib.Path(__file__).resolve().parents[2]

PROGRAM = """\
// Sums the first n odd numbers.
fn odd_sum(n:u32) -> u32 {
  let mut total:u32 = 0;
  for i in 0..usize(n) {
    total += 2 * u32(i) + 1;
  }
  return total > 1;
}

fn main() -> i32 {
  if odd_sum(3) != 9 { return 1; }
  return 0;
}
"""


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[CAIRN, "lsp"]))
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(types.InitializeParams(capabilities=types.ClientCapabilities()))
    yield
    await lsp_client.shutdown_session()


@pytest.fixture
def workdir():
    path = pathlib.Path(tempfile.mkdtemp(prefix="cairn-lsp-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def position_of(text: str, needle: str, offset: int = 0) -> types.Position:
    index = text.index(needle) + offset
    line = text.count("\n", 0, index)
    character = index - (text.rfind("\n", 0, index) + 1)
    return types.Position(line=line, character=character)


async def open_document(client: LanguageClient, path: pathlib.Path, text: str) -> str:
    uri = path.as_uri()
    path.write_text(text, encoding="utf-8")
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="cairn", version=1, text=text)
        )
    )
    await client.wait_for_notification("textDocument/publishDiagnostics")
    return uri


async def test_a_refused_program_gets_coded_diagnostics_that_a_fix_clears(client: LanguageClient, workdir):
    uri = await open_document(client, workdir / "odd.cairn", PROGRAM)
    diagnostics = client.diagnostics[uri]
    assert len(diagnostics) == 1
    diagnostic = diagnostics[0]
    assert diagnostic.code == "E-TYPE-MISMATCH"
    assert diagnostic.severity == types.DiagnosticSeverity.Error
    assert diagnostic.source == "cairn"
    # On the token the refusal names: `total` in `return total > 1;`.
    assert diagnostic.range.start == position_of(PROGRAM, "total > 1")
    assert diagnostic.range.end == position_of(PROGRAM, "total > 1", len("total"))
    assert diagnostic.message.startswith("Expected u32, got bool.")
    assert "\n" in diagnostic.message, "the repair hint follows the message"
    # A core card links the core rules of the packaged skill's SKILL.md.
    href, _, anchor = diagnostic.code_description.href.partition("#")
    card = pathlib.Path(href.removeprefix("file://"))
    assert card.name == "SKILL.md" and anchor == "the-core-rules"
    assert "### base\n" in card.read_text()
    assert diagnostic.data["card"] == "base"
    assert any(r.location.uri == diagnostic.code_description.href for r in diagnostic.related_information)

    # An incremental change removes ` > 1`.
    start = position_of(PROGRAM, " > 1;")
    end = position_of(PROGRAM, " > 1;", len(" > 1"))
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                types.TextDocumentContentChangePartial(range=types.Range(start=start, end=end), text="")
            ],
        )
    )
    await client.wait_for_notification("textDocument/publishDiagnostics")
    assert not client.diagnostics[uri]


async def test_hover_shows_the_row_and_types(client: LanguageClient, workdir):
    text = PROGRAM.replace("total > 1", "total")
    uri = await open_document(client, workdir / "odd.cairn", text)
    assert not client.diagnostics[uri]
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=position_of(text, "odd_sum(3)", 2))
    )
    value = hover.contents.value
    assert "fn odd_sum(n:u32) -> u32" in value
    assert "effects: `trap`" in value
    assert "guard sites:" in value
    assert "Sums the first n odd numbers." in value
    # An expression: its type; a binding: whether it is mutable.
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=position_of(text, "total;", 1))
    )
    assert "`u32`" in hover.contents.value and "mutable" in hover.contents.value


async def test_definition_references_and_symbols(client: LanguageClient, workdir):
    text = PROGRAM.replace("total > 1", "total")
    uri = await open_document(client, workdir / "odd.cairn", text)
    definition = await client.text_document_definition_async(
        types.DefinitionParams(text_document=types.TextDocumentIdentifier(uri=uri), position=position_of(text, "odd_sum(3)", 1))
    )
    assert definition.uri == uri
    assert definition.range.start == position_of(text, "odd_sum(n")
    local = await client.text_document_definition_async(
        types.DefinitionParams(text_document=types.TextDocumentIdentifier(uri=uri), position=position_of(text, "total;", 1))
    )
    assert local.range.start == position_of(text, "total:u32")
    references = await client.text_document_references_async(
        types.ReferenceParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=position_of(text, "odd_sum(n", 1),
            context=types.ReferenceContext(include_declaration=True),
        )
    )
    assert sorted((r.range.start.line, r.range.start.character) for r in references) == [
        (1, 3),
        (position_of(text, "odd_sum(3)").line, position_of(text, "odd_sum(3)").character),
    ]
    symbols = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert [s.name for s in symbols] == ["odd_sum", "main"]
    found = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="ODD"))
    assert [s.name for s in found] == ["odd_sum"]


async def test_semantic_tokens_name_functions_parameters_and_mutable_locals(client: LanguageClient, workdir):
    text = PROGRAM.replace("total > 1", "total")
    uri = await open_document(client, workdir / "odd.cairn", text)
    legend = client.capabilities  # the client's; the server's legend is fixed by the spec
    tokens = await client.text_document_semantic_tokens_full_async(
        types.SemanticTokensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    types_order = ["namespace", "type", "struct", "enum", "interface", "typeParameter", "parameter",
                   "variable", "property", "enumMember", "function", "method", "macro", "effect"]
    decoded, line, start = [], 0, 0
    data = tokens.data
    for i in range(0, len(data), 5):
        line += data[i]
        start = data[i + 1] if data[i] else start + data[i + 1]
        decoded.append((line, start, data[i + 2], types_order[data[i + 3]], data[i + 4]))
    by_position = {(l, s): (kind, mods) for l, s, _, kind, mods in decoded}
    assert by_position[(1, 3)] == ("function", 1), "odd_sum, declared"
    assert by_position[(1, 11)][0] == "parameter"
    total = position_of(text, "total:u32")
    assert by_position[(total.line, total.character)] == ("variable", 1 | 8), "a mutable local, declared"
    assert legend is not None


async def test_a_quick_fix_makes_an_assigned_let_mutable(client: LanguageClient, workdir):
    text = "fn f() -> u32 {\n  let x:u32 = 1;\n  x = 2;\n  return x;\n}\n"
    uri = await open_document(client, workdir / "imm.cairn", text)
    [diagnostic] = client.diagnostics[uri]
    assert diagnostic.code == "E-IMMUTABLE"
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diagnostic.range,
            context=types.CodeActionContext(diagnostics=[diagnostic]),
        )
    )
    assert len(actions) == 1 and actions[0].kind == types.CodeActionKind.QuickFix
    [edit] = actions[0].edit.changes[uri]
    assert edit.new_text == "mut " and edit.range.start == position_of(text, "x:u32")


async def test_a_project_is_analysed_whole(client: LanguageClient, workdir):
    project = workdir / "weather"
    shutil.copytree(REPO / "examples" / "weather", project, ignore=shutil.ignore_patterns("build"))
    main = project / "src" / "main.cairn"
    text = main.read_text(encoding="utf-8")
    uri = await open_document(client, main, text)
    assert not client.diagnostics[uri]
    definition = await client.text_document_definition_async(
        types.DefinitionParams(text_document=types.TextDocumentIdentifier(uri=uri), position=position_of(text, "celsius_tenths", 1))
    )
    assert definition.uri == (project / "src" / "units.cairn").as_uri()
    # A refusal in the other file shows at the top of this one, prefixed with where it is.
    units = project / "src" / "units.cairn"
    units_text = units.read_text(encoding="utf-8").replace("* 5 / 9", "* true")
    units_uri = await open_document(client, units, units_text)
    # One check publishes to both open files; wait until both are in.
    for _ in range(200):
        if client.diagnostics.get(units_uri) and client.diagnostics.get(uri):
            break
        await asyncio.sleep(0.01)
    assert client.diagnostics[units_uri][0].code.startswith("E-")
    top = client.diagnostics[uri]
    assert top and top[0].message.startswith("src/units.cairn:")
    assert top[0].related_information[0].location.uri == units_uri, "related information points at the refusal"


async def test_what_cannot_be_answered_is_an_error_not_a_crash(client: LanguageClient, workdir):
    with pytest.raises(Exception):
        await client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=(workdir / "never-opened.cairn").as_uri()),
                position=types.Position(line=0, character=0),
            )
        )
    with pytest.raises(Exception):
        await client.protocol.send_request_async("cairn/noSuchMethod", {})
    # Still serving.
    uri = await open_document(client, workdir / "ok.cairn", "fn main() -> i32 {\n  return 0;\n}\n")
    assert not client.diagnostics[uri]


def write_project(root: pathlib.Path, files: dict) -> None:
    (root / "src").mkdir(parents=True)
    sources = ", ".join(f'"{name}"' for name in files)
    (root / "cairn.toml").write_text(
        f'[project]\nname = "orchard"\nsources = [{sources}]\n\n[build]\nkind = "exe"\n', encoding="utf-8"
    )
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")


async def wait_for_diagnostics(client: LanguageClient, uri: str):
    for _ in range(500):
        if uri in client.diagnostics:
            return client.diagnostics[uri]
        await asyncio.sleep(0.01)
    raise AssertionError(f"nothing was published for {uri}")


async def test_a_project_file_opened_second_gets_diagnostics(client: LanguageClient, workdir):
    basket_text = (
        "module orchard.basket;\nimport orchard.fruit as fruit;\n\n"
        "pub fn weigh(n:u32) -> u32 {\n  return fruit.sugar(n, 3);\n}\n"
    )
    main_text = (
        "module orchard.app;\nimport orchard.basket as basket;\n\n"
        "pub fn main() -> i32 {\n  println(basket.weigh(2));\n  return 0;\n}\n"
    )
    write_project(
        workdir,
        {
            "src/fruit.cairn": "module orchard.fruit;\npub fn sugar(n:u32) -> u32 pure {\n  return n * 9;\n}\n",
            "src/basket.cairn": basket_text,
            "src/main.cairn": main_text,
        },
    )
    main_uri = await open_document(client, workdir / "src" / "main.cairn", main_text)
    assert [d.code for d in client.diagnostics[main_uri]] == ["E-ARITY"]
    # The second file's text equals what the project already read from disk: it still gets the
    # refusal, on its own line.
    basket_uri = (workdir / "src" / "basket.cairn").as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=basket_uri, language_id="cairn", version=1, text=basket_text)
        )
    )
    [diagnostic] = await wait_for_diagnostics(client, basket_uri)
    assert diagnostic.code == "E-ARITY" and diagnostic.range.start.line == 4


async def test_the_missing_arms_quick_fix_completes_the_match(client: LanguageClient, workdir):
    text = (
        "enum Light { Red; Amber; Green(u8); }\n\nfn wait(l:Light) -> u32 {\n  let mut t:u32 = 0;\n"
        "  match l {\n    Red => t = 30;\n  }\n  return t;\n}\n\nfn main() -> i32 { return 0; }\n"
    )
    uri = await open_document(client, workdir / "light.cairn", text)
    [diagnostic] = client.diagnostics[uri]
    assert diagnostic.code == "E-MATCH-COVERAGE"
    assert diagnostic.data["details"]["missing_variants"] == ["Light.Amber", "Light.Green"]
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diagnostic.range,
            context=types.CodeActionContext(diagnostics=[diagnostic]),
        )
    )
    [action] = actions
    assert action.title == "Add the missing arms (Amber, Green)"
    [edit] = action.edit.changes[uri]
    assert edit.new_text == "    Amber => { }\n    Green(_) => { }\n"
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                types.TextDocumentContentChangePartial(range=types.Range(start=edit.range.start, end=edit.range.end), text=edit.new_text)
            ],
        )
    )
    await client.wait_for_notification("textDocument/publishDiagnostics")
    assert not client.diagnostics[uri], "the completed match passes the check"


async def test_a_manifest_that_does_not_load_is_a_diagnostic(client: LanguageClient, workdir):
    (workdir / "src").mkdir()
    (workdir / "cairn.toml").write_text('[project]\nname = "broken\nsources = ["src/a.cairn"]\n', encoding="utf-8")
    uri = await open_document(client, workdir / "src" / "a.cairn", "fn main() -> i32 { return 0; }\n")
    [diagnostic] = client.diagnostics[uri]
    assert diagnostic.code == "E-PROJECT-OR-ENVIRONMENT"
    assert "not valid TOML" in diagnostic.message
    assert diagnostic.range.start == types.Position(line=0, character=0)
    assert any(r.location.uri == (workdir / "cairn.toml").as_uri() for r in diagnostic.related_information)



async def test_an_unknown_type_gets_an_import_that_makes_the_program_pass(client: LanguageClient, workdir):
    text = (
        "fn half(x:u32) -> Option[u32] {\n  if x % 2 == 0 { return Some(x / 2); }\n  return None;\n}\n\n"
        "fn main() -> i32 { return 0; }\n"
    )
    uri = await open_document(client, workdir / "half.cairn", text)
    [diagnostic] = client.diagnostics[uri]
    assert diagnostic.code == "E-TYPE"
    # The range marks the unknown type's name, not the `fn` the checker reports it at.
    assert diagnostic.range.start == position_of(text, "Option")
    assert diagnostic.range.end == position_of(text, "Option", len("Option"))
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diagnostic.range,
            context=types.CodeActionContext(diagnostics=[diagnostic]),
        )
    )
    [action] = actions
    assert action.title == "Import Option from std.core"
    [edit] = action.edit.changes[uri]
    assert edit.new_text == "import std.core (Option);\n"
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                types.TextDocumentContentChangePartial(range=types.Range(start=edit.range.start, end=edit.range.end), text=edit.new_text)
            ],
        )
    )
    await client.wait_for_notification("textDocument/publishDiagnostics")
    assert not client.diagnostics[uri], "the imported type resolves"


async def test_variants_binders_and_tests_in_hover_definition_and_tokens(client: LanguageClient, workdir):
    text = (
        "enum Step { Walk(u32); Jog(u32); Rest; }\n\n"
        "fn pace(s:Step) -> u32 {\n  let mut out:u32 = 0;\n  match s {\n    Walk(m) => out = m;\n"
        "    Jog(m) => out = m * 2;\n    Rest => out = 0;\n  }\n  return out;\n}\n\n"
        "fn main() -> i32 {\n  if pace(Step.Jog(3)) != 6 { return 1; }\n  return 0;\n}\n\n"
        "test jogging_doubles {\n  assert(pace(Step.Rest) == 0);\n}\n"
    )
    uri = await open_document(client, workdir / "steps.cairn", text)
    assert not client.diagnostics[uri]
    document = types.TextDocumentIdentifier(uri=uri)
    for use in ["Jog(3)", "Jog(m)"]:
        definition = await client.text_document_definition_async(
            types.DefinitionParams(text_document=document, position=position_of(text, use, 1))
        )
        assert definition.uri == uri and definition.range.start == position_of(text, "Jog(u32)"), use
    hovers = {}
    for needle, offset in [("s:Step", 0), ("mut out", 4), ("jogging_doubles", 0)]:
        hover = await client.text_document_hover_async(
            types.HoverParams(text_document=document, position=position_of(text, needle, offset))
        )
        hovers[needle] = hover.contents.value
    assert hovers["s:Step"] == "`Step`, an immutable binding"
    assert hovers["mut out"] == "`u32`, a mutable binding"
    assert hovers["jogging_doubles"].startswith("```cairn\ntest jogging_doubles\n```")
    tokens = await client.text_document_semantic_tokens_full_async(types.SemanticTokensParams(text_document=document))
    enum_member = 9
    kinds, line, start = {}, 0, 0
    for i in range(0, len(tokens.data), 5):
        line += tokens.data[i]
        start = tokens.data[i + 1] if tokens.data[i] else start + tokens.data[i + 1]
        kinds[(line, start)] = tokens.data[i + 3]
    for needle in ["Walk(m)", "Jog(3)", "Rest)"]:
        at = position_of(text, needle)
        assert kinds[(at.line, at.character)] == enum_member, needle
