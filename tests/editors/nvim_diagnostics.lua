-- Headless Neovim end-to-end check of `stridelint server` (run by tests/it/editor_neovim.rs).
--
--   STRIDELINT=target/release/stridelint FIXTURE=fixtures/python/factories.py OUT=/tmp/out \
--     nvim --headless -u NONE -c "luafile tests/editors/nvim_diagnostics.lua"
--
-- Opens FIXTURE, starts the server for its buffer, and waits (up to 30 s) for the
-- server's `textDocument/publishDiagnostics` for that buffer. OUT then gets:
--   LINE:COL CODE MESSAGE     one per diagnostic, sorted, both 1-based (LSP position + 1)
--   HOVER <text>              the first non-blank line of the hover at the first diagnostic,
--                             or `HOVER none`
-- then the client is stopped and Neovim quits (`qa!`). With no diagnostics in 30 s OUT
-- gets `TIMEOUT`; if the server exits first, `EXIT <code> <signal>`; on a Lua error,
-- `ERROR <message>`; each of these quits with `cquit` (status 1).
--
-- Works on Neovim 0.7 (Debian bookworm: `vim.lsp.start_client` + `buf_attach_client`)
-- and newer (`vim.lsp.start`). `-u NONE` loads no filetype plugins, so the filetype and
-- the languageId are set from the file's extension here.

local WAIT_MS = 30000
-- After a publish with no diagnostics, how long to wait for a later, non-empty one.
local SETTLE_MS = 2000

local out_path = os.getenv("OUT")

local function write_out(lines)
  local f = assert(io.open(assert(out_path, "OUT is not set"), "w"))
  for _, line in ipairs(lines) do
    f:write(line, "\n")
  end
  f:close()
end

local function one_line(s)
  return (tostring(s):gsub("[\r\n]+", " "))
end

-- The first non-blank line of a hover's `contents` (MarkupContent, MarkedString or a list).
local function hover_text(contents)
  local parts = {}
  local function add(c)
    if type(c) == "string" then
      table.insert(parts, c)
    elseif type(c) == "table" then
      if c.value ~= nil then
        table.insert(parts, c.value)
      else
        for _, item in ipairs(c) do
          add(item)
        end
      end
    end
  end
  add(contents)
  for line in table.concat(parts, "\n"):gmatch("[^\r\n]+") do
    if line:match("%S") then
      return line
    end
  end
  return nil
end

local LANGUAGES = { py = "python", rs = "rust" }

local function main()
  local binary = assert(os.getenv("STRIDELINT"), "STRIDELINT is not set")
  local fixture = assert(os.getenv("FIXTURE"), "FIXTURE is not set")
  assert(out_path, "OUT is not set")

  vim.cmd("edit " .. vim.fn.fnameescape(fixture))
  local bufnr = vim.api.nvim_get_current_buf()
  local language = LANGUAGES[vim.fn.fnamemodify(fixture, ":e")] or ""
  vim.bo[bufnr].filetype = language

  local published = nil -- the latest publishDiagnostics result for this buffer
  local published_at = nil
  local exited = nil

  local default_publish = vim.lsp.handlers["textDocument/publishDiagnostics"]
  local config = {
    name = "stridelint",
    cmd = { binary, "server" },
    root_dir = vim.fn.getcwd(),
    get_language_id = function()
      return language
    end,
    handlers = {
      ["textDocument/publishDiagnostics"] = function(err, result, ctx, cfg)
        if result and vim.uri_to_bufnr(result.uri) == bufnr then
          published = result
          published_at = vim.loop.now()
        end
        if default_publish then
          pcall(default_publish, err, result, ctx, cfg)
        end
      end,
    },
    on_exit = function(code, signal)
      exited = { code = code, signal = signal }
    end,
  }

  local client_id
  if vim.lsp.start then
    client_id = vim.lsp.start(config, { bufnr = bufnr })
  else
    client_id = vim.lsp.start_client(config)
    if client_id then
      vim.lsp.buf_attach_client(bufnr, client_id)
    end
  end
  assert(client_id, "the language client did not start")

  local function stop_and(quit)
    pcall(vim.lsp.stop_client, client_id)
    vim.wait(5000, function()
      return vim.lsp.get_client_by_id(client_id) == nil
    end, 50)
    vim.cmd(quit)
  end

  local done = vim.wait(WAIT_MS, function()
    if exited then
      return true
    end
    if published == nil then
      return false
    end
    if #(published.diagnostics or {}) > 0 then
      return true
    end
    return vim.loop.now() - published_at >= SETTLE_MS
  end, 50)

  if published == nil then
    if exited then
      write_out({ string.format("EXIT %s %s", tostring(exited.code), tostring(exited.signal)) })
    else
      write_out({ "TIMEOUT" })
    end
    stop_and("cquit")
    return
  end

  local diagnostics = vim.deepcopy(published.diagnostics or {})
  table.sort(diagnostics, function(a, b)
    local sa, sb = a.range.start, b.range.start
    if sa.line ~= sb.line then
      return sa.line < sb.line
    end
    return sa.character < sb.character
  end)

  local lines = {}
  for _, d in ipairs(diagnostics) do
    local start = d.range.start
    local code = d.code ~= nil and tostring(d.code) or "-"
    table.insert(
      lines,
      string.format("%d:%d %s %s", start.line + 1, start.character + 1, code, one_line(d.message))
    )
  end

  local hover = nil
  if diagnostics[1] and not exited then
    local params = {
      textDocument = { uri = vim.uri_from_bufnr(bufnr) },
      position = diagnostics[1].range.start,
    }
    local responses = vim.lsp.buf_request_sync(bufnr, "textDocument/hover", params, 10000)
    for id, response in pairs(responses or {}) do
      if id == client_id and response.result and response.result.contents then
        hover = hover_text(response.result.contents)
      end
    end
  end
  table.insert(lines, "HOVER " .. (hover and one_line(hover) or "none"))

  write_out(lines)
  stop_and(done and "qa!" or "cquit")
end

local ok, err = xpcall(main, debug.traceback)
if not ok then
  pcall(write_out, { "ERROR " .. one_line(err) })
  vim.cmd("cquit")
end
