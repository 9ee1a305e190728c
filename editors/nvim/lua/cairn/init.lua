-- The CAIRN language server for Neovim (0.7 and newer): `require('cairn').setup({...})` once,
-- then every `cairn` buffer is attached to one `cairn lsp` per project root (the directory
-- holding cairn.toml, else the file's own directory). Options:
--   cmd          the server command (default: { 'cairn', 'lsp' }, or $CAIRN with 'lsp')
--   on_attach    function(client, bufnr) called for each attached buffer
--   capabilities the client capabilities (default: Neovim's own)
-- Without setup(), nothing starts: the filetype plugin's attach is a no-op.
local M = {}

local config = nil
local clients = {} -- root directory -> client id

local function root_of(path)
  local dir = vim.fn.fnamemodify(path, ':p:h')
  local found = vim.fn.findfile('cairn.toml', dir .. ';')
  if found ~= '' then
    return vim.fn.fnamemodify(found, ':p:h')
  end
  return dir
end

function M.setup(options)
  options = options or {}
  local cmd = options.cmd
  if cmd == nil then
    local binary = vim.env.CAIRN
    if binary == nil or binary == '' then
      binary = 'cairn'
    end
    cmd = { binary, 'lsp' }
  end
  config = {
    cmd = cmd,
    on_attach = options.on_attach,
    capabilities = options.capabilities or vim.lsp.protocol.make_client_capabilities(),
  }
  -- Buffers opened before setup() are attached now.
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr) and vim.bo[bufnr].filetype == 'cairn' then
      M.attach(bufnr)
    end
  end
end

-- Attaches `bufnr` (0: the current buffer) to its project's server, starting it when needed.
function M.attach(bufnr)
  if config == nil then
    return nil
  end
  if bufnr == 0 then
    bufnr = vim.api.nvim_get_current_buf()
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == '' then
    return nil
  end
  local root = root_of(name)
  local id = clients[root]
  if id == nil or vim.lsp.get_client_by_id(id) == nil then
    id = vim.lsp.start_client({
      name = 'cairn',
      cmd = config.cmd,
      root_dir = root,
      workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
      capabilities = config.capabilities,
      on_attach = config.on_attach,
    })
    if id == nil then
      vim.notify('cairn: the language server did not start (' .. table.concat(config.cmd, ' ') .. ')', vim.log.levels.ERROR)
      return nil
    end
    clients[root] = id
  end
  vim.lsp.buf_attach_client(bufnr, id)
  return id
end

-- Formats the current buffer through the server (`cairn fmt`), with whichever API this Neovim has.
function M.format()
  if vim.lsp.buf.format then
    vim.lsp.buf.format({ timeout_ms = 5000 })
  else
    vim.lsp.buf.formatting_sync(nil, 5000)
  end
end

return M
