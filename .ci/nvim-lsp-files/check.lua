-- The Neovim end-to-end check of `retry-policy lsp`, run by .ci/nvim-lsp. It uses only APIs
-- that Neovim 0.7 has (vim.lsp.start_client, buf_attach_client, client.request_sync).
local bin = os.getenv('RETRY_POLICY_BIN')
local file = os.getenv('RETRY_POLICY_FILE')
local failures = 0

local function say(text) io.stdout:write(text .. '\n') end
local function check(condition, what, detail)
  if condition then
    say('  ok    ' .. what)
  else
    failures = failures + 1
    say('  FAIL  ' .. what .. (detail and (': ' .. detail) or ''))
  end
end

local function run()
  vim.cmd('edit ' .. vim.fn.fnameescape(file))
  local buf = vim.api.nvim_get_current_buf()
  local client_id = vim.lsp.start_client({
    name = 'retry-policy', cmd = { bin, 'lsp' }, root_dir = vim.fn.fnamemodify(file, ':h'),
  })
  check(client_id ~= nil, 'the client started `' .. bin .. ' lsp`')
  vim.lsp.buf_attach_client(buf, client_id)
  local client = vim.lsp.get_client_by_id(client_id)

  -- Diagnostics: Neovim turns the server's UTF-16 columns into byte columns, so the emoji
  -- line checks the conversion (the 4-byte emoji is 2 UTF-16 code units).
  local got = vim.wait(15000, function() return #vim.diagnostic.get(buf) >= 4 end, 50)
  check(got, 'four diagnostics arrived')
  local diagnostics = vim.diagnostic.get(buf)
  table.sort(diagnostics, function(a, b) return a.lnum < b.lnum or (a.lnum == b.lnum and a.col < b.col) end)
  local expected = {
    { 4, 27, 33, "unknown clause 'bakoff'; did you mean 'backoff'?", 'unknown-clause' },
    { 5, 30, 31, "unknown unit 'd'; did you mean '120h'?", 'unknown-unit' },
    { 7, 19, 23, "unexpected character '😀' (U+1F600)", 'unexpected-character' },
    { 7, 24, 29, "unknown clause 'delai'; did you mean 'delay'?", 'unknown-clause' },
  }
  check(#diagnostics == #expected, 'exactly ' .. #expected .. ' diagnostics', tostring(#diagnostics))
  for index, want in ipairs(expected) do
    local d = diagnostics[index] or {}
    local where = string.format('%d:%d-%d', want[1] + 1, want[2] + 1, want[3] + 1)
    check(d.lnum == want[1] and d.col == want[2] and d.end_col == want[3],
      'diagnostic ' .. index .. ' at line:col ' .. where,
      string.format('got %s:%s-%s', tostring(d.lnum and d.lnum + 1), tostring(d.col and d.col + 1), tostring(d.end_col and d.end_col + 1)))
    check(d.message == want[4], 'diagnostic ' .. index .. ' says "' .. want[4] .. '"', tostring(d.message))
    check(d.severity == vim.diagnostic.severity.ERROR and d.code == want[5],
      'diagnostic ' .. index .. ' is an error with code ' .. want[5], tostring(d.code))
  end

  -- Hover on the name of the valid policy `quick` (line 2, column 9).
  local uri = vim.uri_from_bufnr(buf)
  local hover = client.request_sync('textDocument/hover',
    { textDocument = { uri = uri }, position = { line = 1, character = 9 } }, 10000, buf)
  local value = hover and hover.result and hover.result.contents and hover.result.contents.value or ''
  check(hover and hover.result and hover.result.contents.kind == 'markdown', 'hover answers Markdown')
  check(value:find('policy `quick`', 1, true) ~= nil, 'hover names the policy `quick`')
  check(value:find('exponential(maxCount: 3, initial: 1s, multiplier: 2)', 1, true) ~= nil,
    'hover shows the compiled behavior', value)
  check(value:find('worst-case total: 7s', 1, true) ~= nil, 'hover shows the worst-case total 7s', value)

  -- Formatting refuses a file with errors: no edit.
  local params = { textDocument = { uri = uri }, options = { tabSize = 4, insertSpaces = true } }
  local refused = client.request_sync('textDocument/formatting', params, 10000, buf)
  check(refused and refused.err == nil and (refused.result == nil or #refused.result == 0),
    'formatting a file with errors gives no edit')

  -- Replace the text with a valid, unformatted one: the diagnostics clear, then formatting
  -- gives the canonical text.
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, {
    'policy   quick =  retry 3   backoff 1s',
    'policy payments {',
    '  retry 5 on serverError backoff 1s   # main',
    '      within 2m',
    '}',
  })
  local cleared = vim.wait(15000, function() return #vim.diagnostic.get(buf) == 0 end, 50)
  check(cleared, 'the diagnostics cleared after the change')
  local formatted = client.request_sync('textDocument/formatting', params, 10000, buf)
  local edits = formatted and formatted.result or {}
  check(#edits == 1, 'formatting gives one whole-document edit', tostring(#edits))
  vim.lsp.util.apply_text_edits(edits, buf, 'utf-16')
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local want = {
    'policy quick = retry 3 backoff 1s', '', 'policy payments {',
    '    retry 5 on serverError backoff 1s  # main', '    within 2m', '}',
  }
  check(table.concat(lines, '\n') == table.concat(want, '\n'), 'the formatted buffer is canonical',
    table.concat(lines, '\\n'))
  client.stop()
end

local ok, message = pcall(run)
if not ok then
  failures = failures + 1
  say('  FAIL  the check raised: ' .. tostring(message))
end
if failures == 0 then
  say('nvim-lsp: all checks passed')
  vim.cmd('qall!')
else
  say('nvim-lsp: ' .. failures .. ' check(s) failed')
  vim.cmd('cquit 1')
end
