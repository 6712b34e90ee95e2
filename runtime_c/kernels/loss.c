/* Softmax cross-entropy loss and its gradient. The loss is two kernels (two
 * forks): per-row log-probabilities in parallel, then core 0 sums the rows. */
#include <math.h>

#include "dm_loss.h"
#include "dm_rows.h"

void dm_sce_logprob_fp32(void *args)
{
    const dm_sce_args_t *a = (const dm_sce_args_t *)args;
    const uint32_t classes = a->classes;
    uint32_t b0, b1;
    dm_chunk(a->batch, &b0, &b1);
    for (uint32_t b = b0; b < b1; b++) {
        const float *x = a->logits + b * classes;
        float *lp = a->log_prob + b * classes;
        const float mx = dm_row_max(x, classes, 1u);
        const float lse = dm_logf(dm_row_exp_sum(x, classes, 1u, mx));
        for (uint32_t c = 0; c < classes; c++) lp[c] = x[c] - mx - lse;
        if (a->row_loss != NULL) a->row_loss[b] = -lp[(uint32_t)a->labels[b]];
    }
}

void dm_sce_reduce_fp32(void *args)
{
    const dm_sce_args_t *a = (const dm_sce_args_t *)args;
    if (pi_core_id() != 0) return;
    float sum = 0.0f;
    for (uint32_t b = 0; b < a->batch; b++) {
        sum += a->row_loss != NULL ? a->row_loss[b]
                                   : -a->log_prob[b * a->classes + (uint32_t)a->labels[b]];
    }
    a->loss[0] = a->reduction == DM_REDUCTION_MEAN ? sum / (float)a->batch : sum;
}

void dm_sce_grad_fp32(void *args)
{
    const dm_sce_grad_args_t *a = (const dm_sce_grad_args_t *)args;
    const uint32_t classes = a->classes;
    uint32_t b0, b1;
    dm_chunk(a->batch, &b0, &b1);
    float scale = a->dY != NULL ? a->dY[0] : 1.0f;
    if (a->reduction == DM_REDUCTION_MEAN) scale /= (float)a->batch;
    for (uint32_t b = b0; b < b1; b++) {
        const float *lp = a->log_prob + b * classes;
        float *dx = a->dX + b * classes;
        const uint32_t label = (uint32_t)a->labels[b];
        for (uint32_t c = 0; c < classes; c++) {
            dx[c] = (dm_expf(lp[c]) - (c == label ? 1.0f : 0.0f)) * scale;
        }
    }
}
