/* deeploy-mlir: stands in for pulp-runtime's minimal-libc io.h when
 * pulp-runtime's init.c is built against picolibc (pmsis_gvsoc.c defines
 * these hooks). */
#ifndef DM_GVSOC_SHIM_IO_H
#define DM_GVSOC_SHIM_IO_H
int pos_io_start(void);
int pos_io_stop(void);
#endif
