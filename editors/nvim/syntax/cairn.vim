" CAIRN syntax: the same word classes as the VS Code grammar (editors/vscode/syntaxes); what the
" checker knows more precisely, the language server's semantic tokens add.
if exists('b:current_syntax')
  finish
endif

syntax keyword cairnControl if else for each in while return match break continue try yield defer
syntax keyword cairnControl spawn parallel reduce compact scan into after then barrier wait
syntax keyword cairnDeclaration fn struct enum family let trait impl const type extern kernel derive
syntax keyword cairnDeclaration recipe plan layout test module import use implements when tune needs
syntax keyword cairnDeclaration require fold launch asm
syntax keyword cairnModifier mut pub ro rw reg nat pure effects unsafe linear dyn lends packed align
syntax keyword cairnModifier exclusive volatile out clobbers shared pipeline depth blocks threads warp
syntax keyword cairnModifier host device pinned unified where as
syntax keyword cairnStorage buffer stack zeroed
syntax keyword cairnBoolean true false
syntax keyword cairnPrimitive bool u8 u16 u32 u64 usize i8 i16 i32 i64 f16 bf16 f32 f64 f8e4m3 f8e5m2 void
syntax keyword cairnStd Buf Vec Array Option Result Atomic Mutex Group IoRing Cache
syntax match cairnType "\<[A-Z][A-Za-z0-9_]*\>"
syntax match cairnFunction "\<[a-z_][A-Za-z0-9_]*\ze\s*("
syntax match cairnNumber "\<[0-9][0-9_]*\(\.[0-9][0-9_]*\)\=\([eE][+-]\=[0-9]\+\)\=\>"
syntax match cairnNumber "\<0x[0-9A-Fa-f_]\+\>"
syntax match cairnNumber "\<0b[01_]\+\>"
syntax match cairnEscape "\\\(x[0-9A-Fa-f]\{2}\|[ntr0\\\"']\)" contained
syntax region cairnString start=+"+ skip=+\\\\\|\\"+ end=+"+ contains=cairnEscape
syntax match cairnChar "'\(\\\(x[0-9A-Fa-f]\{2}\|[ntr0\\\"']\)\|[^'\\]\)'"
syntax keyword cairnTodo TODO FIXME XXX contained
syntax match cairnComment "//.*$" contains=cairnTodo

highlight default link cairnControl Conditional
highlight default link cairnDeclaration Keyword
highlight default link cairnModifier StorageClass
highlight default link cairnStorage StorageClass
highlight default link cairnBoolean Boolean
highlight default link cairnPrimitive Type
highlight default link cairnStd Type
highlight default link cairnType Type
highlight default link cairnFunction Function
highlight default link cairnNumber Number
highlight default link cairnString String
highlight default link cairnChar Character
highlight default link cairnEscape SpecialChar
highlight default link cairnComment Comment
highlight default link cairnTodo Todo

let b:current_syntax = 'cairn'
