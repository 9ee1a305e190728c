-- A headless Neovim session against `cairn lsp` through editors/nvim (crates/cairn_cli/tests/nvim.rs
-- runs it): the filetype, the syntax, diagnostics, hover, completion, rename and formatting, each
-- written to $CAIRN_NVIM_OUT as JSON for the test to judge. Positions are 0-based.
local results = {}
local function put(name, value)
  results[name] = value
end

local function finish()
  local file = io.open(vim.env.CAIRN_NVIM_OUT, 'w')
  file:write(vim.fn.json_encode(results))
  file:close()
  vim.cmd('qall!')
end

local ok, err = pcall(function()
  require('cairn').setup({})
  vim.cmd('edit ' .. vim.fn.fnameescape(vim.env.CAIRN_NVIM_FILE))
  local buf = vim.api.nvim_get_current_buf()
  put('filetype', vim.bo[buf].filetype)
  put('syntax', vim.b[buf].current_syntax or '')
  put('shiftwidth', vim.bo[buf].shiftwidth)

  -- The server attaches and publishes the checker's refusal.
  local attached = vim.wait(20000, function()
    return #vim.lsp.buf_get_clients(buf) > 0
  end, 50)
  put('attached', attached)
  vim.wait(20000, function()
    return #vim.diagnostic.get(buf) > 0
  end, 50)
  local diagnostics = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    table.insert(diagnostics, { line = d.lnum, code = d.code or '', message = d.message })
  end
  put('diagnostics', diagnostics)

  local uri = vim.uri_from_bufnr(buf)
  local function at(line, character)
    return { textDocument = { uri = uri }, position = { line = line, character = character } }
  end
  local function ask(method, params)
    local answers = vim.lsp.buf_request_sync(buf, method, params, 10000) or {}
    for _, answer in pairs(answers) do
      if answer.result ~= nil then
        return answer.result
      end
    end
    return vim.NIL
  end

  -- Hover on the call of `twice` (line 3: `  let a:u64 = twice(21);`).
  local hover = ask('textDocument/hover', at(3, 15))
  local text = ''
  if hover ~= vim.NIL and hover.contents ~= nil then
    text = type(hover.contents) == 'table' and (hover.contents.value or vim.inspect(hover.contents)) or hover.contents
  end
  put('hover', text)

  -- Completion inside `main`'s body: the program's functions are offered.
  local completion = ask('textDocument/completion', at(3, 16))
  local labels = {}
  local items = completion ~= vim.NIL and (completion.items or completion) or {}
  for _, item in ipairs(items) do
    table.insert(labels, item.label)
  end
  put('completion', labels)

  -- Rename `twice` at its declaration: every use changes.
  local edit = ask('textDocument/rename', vim.tbl_extend('force', at(0, 4), { newName = 'double' }))
  local edits = 0
  if edit ~= vim.NIL then
    for _, list in pairs(edit.changes or {}) do
      edits = edits + #list
    end
    for _, change in ipairs(edit.documentChanges or {}) do
      edits = edits + #(change.edits or {})
    end
  end
  put('rename_edits', edits)

  -- Formatting: `cairn fmt`'s text for the buffer.
  local formatting = ask('textDocument/formatting', { textDocument = { uri = uri }, options = { tabSize = 2, insertSpaces = true } })
  put('formatting', formatting ~= vim.NIL and #formatting or -1)
end)
if not ok then
  put('error', tostring(err))
end
finish()
