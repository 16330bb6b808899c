# Turns one file into a C array (NUL-terminated) and its length, so the
# binary carries generated data it needs at run time (src/kube/gen/api.json).
# Run by the build (CMakeLists.txt) with -DIN=<file> -DOUT=<file.c> -DSYMBOL=<name>.
if(NOT DEFINED IN OR NOT DEFINED OUT OR NOT DEFINED SYMBOL)
  message(FATAL_ERROR "embed_file.cmake needs -DIN=<file> -DOUT=<file.c> -DSYMBOL=<name>")
endif()
file(READ ${IN} hex HEX)
string(LENGTH "${hex}" hexlen)
math(EXPR len "${hexlen} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
file(WRITE ${OUT} "/* generated from ${IN} by cmake/embed_file.cmake */\n#include <stddef.h>\n"
     "const char ${SYMBOL}[] = {${bytes}0};\nconst size_t ${SYMBOL}_len = ${len};\n")
