# Writes a complete compute shader: the version line, TELA_GLSL, the layout header that C
# shares (gpu_layout.h), then the body, renumbered from line 1 so that compiler messages
# name the body's own lines.  Called as:
#   cmake -DHEADER=gpu_layout.h -DBODY=gpu_x.comp -DOUT=dir/gpu_x.comp -P compose.cmake
file(READ "${HEADER}" header)
file(READ "${BODY}" body)
file(WRITE "${OUT}.tmp" "#version 430 core\n#define TELA_GLSL 1\n${header}#line 1\n${body}")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
