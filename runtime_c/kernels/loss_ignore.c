/* Softmax cross-entropy with ignore_index (dm_kernels_ext.h): per-row
 * log-probabilities in parallel, then core 0 sums the kept rows. */
#include <math.h>

#include "dm_kernels_ext.h"
#include "dm_rows.h"

static inline int dm_sce_ignored(uint32_t has_ignore, int64_t ignore_index, int64_t label)
{
    return has_ignore && label == ignore_index;
}

void dm_sce_ii_logprob_fp32(void *args)
{
    const dm_sce_ii_args_t *a = (const dm_sce_ii_args_t *)args;
    const uint32_t classes = a->classes;
    uint32_t b0, b1;
    dm_chunk(a->batch, &b0, &b1);
    for (uint32_t b = b0; b < b1; b++) {
        float *lp = a->log_prob + b * classes;
        dm_row_log_softmax(a->logits + b * classes, lp, classes, 1u);
        const int64_t label = a->labels[b];
        if (a->row_loss == NULL) continue;
        a->row_loss[b] =
            dm_sce_ignored(a->has_ignore, a->ignore_index, label) ? 0.0f : -lp[(uint32_t)label];
    }
}

void dm_sce_ii_reduce_fp32(void *args)
{
    const dm_sce_ii_args_t *a = (const dm_sce_ii_args_t *)args;
    if (pi_core_id() != 0) return;
    float sum = 0.0f;
    uint32_t kept = 0u;
    for (uint32_t b = 0; b < a->batch; b++) {
        if (dm_sce_ignored(a->has_ignore, a->ignore_index, a->labels[b])) continue;
        sum += a->row_loss != NULL ? a->row_loss[b]
                                   : -a->log_prob[b * a->classes + (uint32_t)a->labels[b]];
        kept++;
    }
    a->loss[0] = a->reduction == 0u ? sum / (float)kept : sum; /* 0: DM_REDUCTION_MEAN */
}

void dm_sce_ii_grad_fp32(void *args)
{
    const dm_sce_ii_grad_args_t *a = (const dm_sce_ii_grad_args_t *)args;
    const uint32_t classes = a->classes;
    uint32_t b0, b1;
    dm_chunk(a->batch, &b0, &b1);
    if (b0 >= b1) return;
    float k = a->dY != NULL ? a->dY[0] : 1.0f;
    if (a->reduction == 0u) { /* DM_REDUCTION_MEAN */
        uint32_t kept = 0u;
        for (uint32_t b = 0; b < a->batch; b++) {
            kept += dm_sce_ignored(a->has_ignore, a->ignore_index, a->labels[b]) ? 0u : 1u;
        }
        k /= (float)kept;
    }
    for (uint32_t b = b0; b < b1; b++) {
        const float *lp = a->log_prob + b * classes;
        float *dx = a->dX + b * classes;
        const int64_t label = a->labels[b];
        if (dm_sce_ignored(a->has_ignore, a->ignore_index, label)) {
            for (uint32_t c = 0; c < classes; c++) dx[c] = 0.0f;
            continue;
        }
        for (uint32_t c = 0; c < classes; c++) {
            dx[c] = (dm_expf(lp[c]) - (c == (uint32_t)label ? 1.0f : 0.0f)) * k;
        }
    }
}
