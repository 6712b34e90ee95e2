/* The PMSIS calls that deeploy-mlir's kernels and emitted code use and that
 * both of its PMSIS layers declare alike, with pulp-sdk's names and
 * signatures (rtos/pmsis/pmsis_api): the host emulation (runtime_c/host) and
 * the GVSoC layer (runtime_c/gvsoc). Each layer's pmsis.h includes the types
 * the layers share (dm_pmsis_types.h), defines its pi_cl_dma_cmd_t and
 * includes this file after them; the
 * calls whose signatures differ between the layers (pi_cl_dma_cmd,
 * pi_cl_dma_cmd_2d) stay in the layer's pmsis.h. Include pmsis.h, not this. */
#ifndef DM_PMSIS_API_H
#define DM_PMSIS_API_H

#include "pmsis.h"

/* cores and teams */
uint32_t pi_core_id(void);
uint32_t pi_cluster_id(void);
int pi_cl_team_nb_cores(void);
void pi_cl_team_fork(int nb_cores, void (*entry)(void *), void *arg);
void pi_cl_team_barrier(void);

/* memory */
void *pi_l2_malloc(int size);
void pi_l2_free(void *chunk, int size);
void *pi_cl_l1_malloc(struct pi_device *device, uint32_t size);
void pi_cl_l1_free(struct pi_device *device, void *chunk, int size);

/* cluster */
void pi_cluster_conf_init(struct pi_cluster_conf *conf);
void pi_open_from_conf(struct pi_device *device, void *conf);
int pi_cluster_open(struct pi_device *device);
int pi_cluster_close(struct pi_device *device);
struct pi_cluster_task *pi_cluster_task(struct pi_cluster_task *task, void (*entry)(void *),
                                        void *arg);
int pi_cluster_send_task_to_cl(struct pi_device *device, struct pi_cluster_task *task);

/* performance counters */
void pi_perf_conf(unsigned events);
void pi_perf_reset(void);
void pi_perf_start(void);
void pi_perf_stop(void);
unsigned int pi_perf_read(int id);

/* cluster DMA (mchan): waits */
void pi_cl_dma_cmd_wait(pi_cl_dma_cmd_t *cmd);
void pi_cl_dma_flush(void);

#endif
