" CAIRN buffers: comments, indentation as `cairn fmt` writes it (two spaces), and the language
" server when the `cairn` Lua module is set up (lua/cairn/init.lua).
if exists('b:did_ftplugin')
  finish
endif
let b:did_ftplugin = 1

setlocal commentstring=//\ %s
setlocal comments=://
setlocal expandtab shiftwidth=2 softtabstop=2 tabstop=2
setlocal suffixesadd=.cairn

let b:undo_ftplugin = 'setlocal commentstring< comments< expandtab< shiftwidth< softtabstop< tabstop< suffixesadd<'

lua pcall(function() require('cairn').attach(0) end)
