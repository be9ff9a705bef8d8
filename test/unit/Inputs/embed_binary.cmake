# Writes a C++ header holding the bytes of INPUT as an aligned array NAME
# (cmake -DINPUT=... -DOUTPUT=... -DNAME=... -P embed_binary.cmake).
file(READ ${INPUT} hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
file(WRITE ${OUTPUT}
  "// Generated from ${INPUT}.\n"
  "alignas(16) static const unsigned char ${NAME}[] = {${bytes}};\n")
