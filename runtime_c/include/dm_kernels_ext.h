/* deeploy-mlir fp32 training kernels for the ops of the model zoo (issue
 * 20): unary activations and their gradients, compare / logical / where /
 * cast, AdamW, BatchNorm training, dropout with a counter-based generator,
 * softmax cross-entropy with ignore_index, log-softmax, gather and its
 * gradient, split and concat. The conventions, and the shape of the
 * comments that specify each kernel, are dm_common.h's; the bits are
 * checked by tests/test_zoo_kernels.py. */
#ifndef DM_KERNELS_EXT_H
#define DM_KERNELS_EXT_H

#include "dm_common.h"

/* ------------------------------------------------------------------ unary */

typedef enum {
    DM_UNARY_SIGMOID = 0,    /* x >= 0 ? 1 / (1 + dm_expf(-x)) : e / (1 + e), e = dm_expf(x) */
    DM_UNARY_TANH = 1,       /* dm_tanh (activation_ext.c: from dm_expf) */
    DM_UNARY_LEAKY_RELU = 2, /* x > 0 ? x : alpha * x (ONNX LeakyRelu: x >= 0 gives x too) */
    DM_UNARY_CLIP = 3,       /* x < lo ? lo : (x > hi ? hi : x) (NaN stays NaN) */
    DM_UNARY_ABS = 4,        /* fabsf(x) */
    DM_UNARY_SIGN = 5,       /* x > 0 ? 1 : (x < 0 ? -1 : x)  (0, -0 and NaN kept) */
    DM_UNARY_NEG = 6,        /* -x */
    DM_UNARY_LOG = 7,        /* dm_logf(x) */
    DM_UNARY_EXP = 8,        /* dm_expf(x) */
    DM_UNARY_SQRT = 9,       /* sqrtf(x) */
    DM_UNARY_RECIPROCAL = 10, /* 1 / x */
    DM_UNARY_QUICK_GELU = 11  /* com.microsoft QuickGelu: x * sigmoid(alpha * x) (SiLU: alpha 1) */
} dm_unary_ext_op_e;

/* Y = op(X), parallel over the flat index. Y may alias X. */
typedef struct {
    const float *X;
    float *Y;
    uint32_t size;
    uint32_t op;   /* dm_unary_ext_op_e */
    float alpha;   /* LEAKY_RELU, QUICK_GELU */
    float lo, hi;  /* CLIP */
} dm_unary_ext_args_t;

typedef enum {
    DM_UGRAD_SIGMOID = 0,    /* Z = the output Y: dX = (dY * Y) * (1 - Y)  (SigmoidGrad) */
    DM_UGRAD_TANH = 1,       /* Z = the output Y: dX = dY * (1 - Y * Y)    (TanhGrad) */
    DM_UGRAD_LEAKY_RELU = 2, /* Z = X or Y: dX = Z > 0 ? dY : alpha * dY   (LeakyReluGrad) */
    DM_UGRAD_CLIP = 3,       /* Z = the input X: dX = dY * (lo <= X && X <= hi ? 1 : 0), as
                              * onnxruntime's Clip gradient (GreaterOrEqual, LessOrEqual,
                              * And, Cast, Mul) computes it */
    DM_UGRAD_ABS = 4,        /* Z = the input X: dX = dY * sign(X) (Abs's gradient: Sign, Mul) */
    DM_UGRAD_QUICK_GELU = 5  /* Z = the input X: v = alpha * X, s = sigmoid(v) (as
                              * DM_UNARY_SIGMOID), dX = (dY * s) * (1 + v * (1 - s)) */
} dm_unary_grad_op_e;

/* dX = grad(dY, Z), parallel over the flat index. dX may alias dY or Z. */
typedef struct {
    const float *dY;
    const float *Z;
    float *dX;
    uint32_t size;
    uint32_t op; /* dm_unary_grad_op_e */
    float alpha;
    float lo, hi;
} dm_unary_grad_args_t;

void dm_unary_ext_fp32(void *args);
void dm_unary_grad_fp32(void *args);

/* ------------------------------------------- compare, logical, where, cast */

/* Broadcasting like dm_binary_fp32: Y contiguous with `shape` (rank 0..4),
 * each operand read with its own element strides (0 on a broadcast dim).
 * Booleans are bytes, 0 or 1. Parallel over the flat output index. */
typedef enum {
    DM_CMP_GREATER = 0,       /* A > B   (float operands) */
    DM_CMP_GREATER_EQUAL = 1, /* A >= B */
    DM_CMP_LESS = 2,          /* A < B */
    DM_CMP_LESS_EQUAL = 3,    /* A <= B */
    DM_CMP_EQUAL = 4,         /* A == B */
    DM_LOGIC_AND = 5,         /* A && B  (byte operands) */
    DM_LOGIC_OR = 6,          /* A || B */
    DM_LOGIC_XOR = 7          /* (A != 0) != (B != 0) */
} dm_compare_op_e;

typedef struct {
    const void *A; /* float for DM_CMP_*, uint8_t for DM_LOGIC_* */
    const void *B;
    uint8_t *Y;
    uint32_t rank;
    uint32_t shape[4];
    uint32_t a_strides[4];
    uint32_t b_strides[4];
    uint32_t op; /* dm_compare_op_e */
} dm_compare_args_t;

/* Y = C ? A : B (Where), C bytes, A and B floats, all three broadcast. */
typedef struct {
    const uint8_t *C;
    const float *A;
    const float *B;
    float *Y;
    uint32_t rank;
    uint32_t shape[4];
    uint32_t c_strides[4];
    uint32_t a_strides[4];
    uint32_t b_strides[4];
} dm_where_args_t;

typedef enum {
    DM_CAST_U8_TO_F32 = 0,  /* bool -> float: 0 or 1 */
    DM_CAST_F32_TO_U8 = 1,  /* float -> bool: x != 0 (NaN is true) */
    DM_CAST_I64_TO_F32 = 2, /* (float)x */
    DM_CAST_F32_TO_I64 = 3, /* (int64_t)x, toward zero (x finite and in range) */
    DM_CAST_U8_NOT = 4      /* Not: !x, bytes to bytes */
} dm_cast_op_e;

/* Y = cast(X), parallel over the flat index. */
typedef struct {
    const void *X;
    void *Y;
    uint32_t size;
    uint32_t op; /* dm_cast_op_e */
} dm_cast_args_t;

void dm_compare_fp32(void *args);
void dm_where_fp32(void *args);
void dm_cast(void *args);

/* ------------------------------------------------------------------ AdamW */

/* com.microsoft AdamWOptimizer (onnxruntime-training) on one parameter,
 * updated in place (weight, m1, m2 are read and written, as onnxruntime's
 * kernel aliases them). Nothing changes when update_signal is not NULL and
 * update_signal[0] == 0. With step = step_in[0] (the step count the
 * training loop feeds, 1 at the first update):
 *   correct_bias: ac = 1 - (float)alpha^step, bc = 1 - (float)beta^step,
 *                 the powers in double by binary exponentiation (adamw.c's
 *                 dm_powi; onnxruntime takes std::pow in double), else 1;
 *   m1 = alpha * m1 + (1 - alpha) * g
 *   m2 = beta * m2 + ((1 - beta) * g) * g
 * adam_mode 1 (Hugging Face; what onnxblock.optim.AdamW writes):
 *   lr_c = lr * (sqrtf(bc) / ac)   (lr_c = lr without correct_bias)
 *   w = w - (lr_c * m1) / (sqrtf(m2) + epsilon)
 *   w = w - (lr * weight_decay) * w
 * adam_mode 0 (torch.optim.AdamW):
 *   w = w - (w * lr) * weight_decay
 *   w = w - (lr * m1) / (ac * (sqrtf(m2 / bc) + epsilon))
 * each step one float operation as written (alpha, beta, epsilon,
 * weight_decay are the node's float attributes). Parallel over elements. */
typedef struct {
    float *weight;
    const float *grad;
    float *m1;
    float *m2;
    const float *lr;
    const int64_t *step;
    const uint8_t *update_signal; /* NULL: update */
    uint32_t size;
    float alpha, beta, epsilon, weight_decay;
    uint32_t correct_bias;
    uint32_t adam_mode;
} dm_adamw_args_t;

void dm_adamw_fp32(void *args);

/* The optimizer's step count (AdamWOptimizer's `step`, one int64): out[0] =
 * count[0] + 1, or count[0] when update_signal is not NULL and
 * update_signal[0] == 0. out may alias count. One element: the first core's
 * (dm_chunk of 1). */
typedef struct {
    const int64_t *count;
    const uint8_t *update_signal; /* NULL: count the step */
    int64_t *out;
} dm_step_count_args_t;

void dm_step_count_i64(void *args);

/* ------------------------------------------------------- BatchNorm training */

/* in dm_batchnorm.h (kernel-select offers it) */
#include "dm_batchnorm.h"

/* ----------------------------------------------------------------- dropout */

/* The random bits of element i: a counter-based generator (the same bits
 * whatever the number of cores):
 *   h = (i * 0x9E3779B1) ^ seed ^ (stream * 0x85EBCA77)   (uint32 arithmetic)
 *   h ^= h >> 16; h *= 0x85EBCA6B; h ^= h >> 13; h *= 0xC2B2AE35; h ^= h >> 16
 * (murmur3's finalizer, a bijection of uint32). Element i is kept when
 * (h >> 8) < keep_threshold, keep_threshold = round((1 - ratio) * 2^24)
 * (the caller's; 2^24 keeps all). `stream` tells the calls of one run apart
 * (e.g. the step's mini-batch count times the dropout nodes plus the node's
 * index). */
static inline uint32_t dm_dropout_bits(uint32_t i, uint32_t seed, uint32_t stream)
{
    uint32_t h = (i * 0x9E3779B1u) ^ seed ^ (stream * 0x85EBCA77u);
    h ^= h >> 16;
    h *= 0x85EBCA6Bu;
    h ^= h >> 13;
    h *= 0xC2B2AE35u;
    h ^= h >> 16;
    return h;
}

/* Dropout (training): mask[i] = kept, Y[i] = kept ? X[i] * scale : 0,
 * scale = 1 / (1 - ratio) given by the caller (1 when ratio is 0), with the
 * bits dm_dropout_bits(i, seed, step * streams + stream): `streams` dropout
 * nodes in the step, this one number `stream` of them (streams 0: the stream
 * is `stream` whatever the step); `step` is the training step's mini-batch
 * count (0 for the first mini-batch, then 1, 2, ...), so that every
 * mini-batch draws new masks. mask may be NULL. Parallel over elements. Y may
 * alias X. */
typedef struct {
    const float *X;
    float *Y;
    uint8_t *mask;
    uint32_t size;
    uint32_t seed, stream, keep_threshold;
    float scale;
    uint32_t streams;
    uint32_t step;
} dm_dropout_args_t;

/* DropoutGrad: dX[i] = mask[i] ? dY[i] * scale : 0. dX may alias dY. */
typedef struct {
    const float *dY;
    const uint8_t *mask;
    float *dX;
    uint32_t size;
    float scale;
} dm_dropout_grad_args_t;

void dm_dropout_fp32(void *args);
void dm_dropout_grad_fp32(void *args);

/* ------------------------------------- softmax cross-entropy, ignore_index */

/* SoftmaxCrossEntropyLoss over logits [batch, classes] where a row whose
 * label equals ignore_index (when has_ignore) counts for nothing, two-phase:
 * dm_sce_ii_logprob_fp32, parallel over rows: mx = the row's max (first of
 *   equals), lse = dm_logf(sum of dm_expf(x - mx), in order),
 *   log_prob = x - mx - lse; row_loss[b] = ignored ? 0 : -log_prob[b, label]
 *   (row_loss may be NULL: not written)
 * dm_sce_ii_reduce_fp32, core 0: sum = row_loss[0] + row_loss[1] + ... of
 *   the kept rows in order (from 0.0f; -log_prob[b, label] when row_loss is
 *   NULL); loss[0] = sum / (float)kept for
 *   DM_REDUCTION_MEAN (dm_loss.h's values: 0 mean, 1 sum), sum for SUM;
 *   kept = the number of rows not ignored (0 kept: 0 / 0, NaN, as torch). */
typedef struct {
    const float *logits;
    const int64_t *labels;
    float *log_prob;
    float *row_loss; /* scratch, batch floats; NULL: the reduction reads log_prob */
    float *loss;
    uint32_t batch, classes;
    uint32_t reduction; /* dm_reduction_e */
    uint32_t has_ignore;
    int64_t ignore_index;
} dm_sce_ii_args_t;

/* dX[b,c] = ignored ? 0 : (dm_expf(log_prob[b,c]) - (c == label ? 1 : 0)) * k,
 * k = dY[0] (1 when dY is NULL), divided by (float)kept for MEAN (each core
 * counts the kept rows itself). Parallel over rows. dX may alias log_prob. */
typedef struct {
    const float *dY;
    const float *log_prob;
    const int64_t *labels;
    float *dX;
    uint32_t batch, classes;
    uint32_t reduction; /* dm_reduction_e */
    uint32_t has_ignore;
    int64_t ignore_index;
} dm_sce_ii_grad_args_t;

void dm_sce_ii_logprob_fp32(void *args);
void dm_sce_ii_reduce_fp32(void *args);
void dm_sce_ii_grad_fp32(void *args);

/* ------------------------------------------------------------- log-softmax */

/* X seen as [outer, len, inner] (dm_softmax.h's lines). Parallel over lines.
 * dm_log_softmax_fp32: Y = X - mx - dm_logf(sum of dm_expf(X - mx), in order).
 *   Y may alias X.
 * dm_log_softmax_grad_fp32 (LogSoftmaxGrad_13, Y the forward's output):
 *   s = sum of dY along the line in order, dX = dY - dm_expf(Y) * s.
 *   dX may alias dY. */
typedef struct {
    const float *X; /* grad: dY */
    const float *Y; /* grad: the forward's output; forward: unused */
    float *out;     /* forward: Y; grad: dX */
    uint32_t outer, len, inner;
} dm_log_softmax_args_t;

void dm_log_softmax_fp32(void *args);
void dm_log_softmax_grad_fp32(void *args);

/* ---------------------------------------------------------- gather, scatter */

/* Gather along one axis: data [outer, rows, inner], n indices (int64,
 * -rows <= i < rows, negative from the end) -> Y [outer, n, inner].
 * Parallel over the outer * n output rows. */
typedef struct {
    const float *data;
    const int64_t *indices;
    float *Y;
    uint32_t outer, rows, inner, n;
} dm_gather_args_t;

/* GatherGrad (scatter-add): dX [outer, rows, inner] =
 *   for each row r: sum over j = 0..n-1 with index j naming r of dY[o, j, :],
 *   added in increasing j from 0.0f (rows no index names are 0).
 * Parallel over the outer * rows output rows (each core scans the indices),
 * so no two cores write one element. dX must not alias dY. */
typedef struct {
    const float *dY;
    const int64_t *indices;
    float *dX;
    uint32_t outer, rows, inner, n;
} dm_gather_grad_args_t;

void dm_gather_fp32(void *args);
void dm_gather_grad_fp32(void *args);

/* ----------------------------------------------------------- split, concat */

/* Concat and Split, one part per call: the part [outer, len, inner] is the
 * slab of rows offset .. offset + len - 1 along the axis of the whole tensor
 * [outer, total, inner]. Concat copies the part into the whole, Split the
 * slab out of the whole into the part (a Concat or Split of k parts is k
 * calls). Parallel over the outer * len rows of the part, each copied as
 * `inner` floats. */
typedef struct {
    float *whole;
    float *part;
    uint32_t outer, total, offset, len, inner;
} dm_concat_args_t;

void dm_concat_fp32(void *args);
void dm_split_fp32(void *args);

#endif
