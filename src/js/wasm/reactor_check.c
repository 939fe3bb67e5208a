/* meson's check (src/js/meson.build) that the compiler links a wasm32-wasi
 * reactor with an export and wasi-libc's stdio. */
#include <stdio.h>

__attribute__((export_name("check"))) int check(void);
int check(void)
{
    return snprintf(NULL, 0, "%d", 42);
}
