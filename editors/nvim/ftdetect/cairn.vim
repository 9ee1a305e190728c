" CAIRN source files: *.cairn is the `cairn` filetype (editors/nvim, docs/tools/nvim.md).
autocmd BufRead,BufNewFile *.cairn setfiletype cairn
