" The :CairnFormat command: the buffer through the language server's formatting (`cairn fmt`).
if exists('g:loaded_cairn')
  finish
endif
let g:loaded_cairn = 1

command! CairnFormat lua require('cairn').format()
