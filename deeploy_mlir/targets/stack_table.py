"""Each kernel entry's deepest stack path in bytes (callees included), as
`python scripts/measure_stacks.py --kernels --write` writes it (each entry
with the level that measured it): gcc's -fstack-usage and
-fcallgraph-info=su of runtime_c/kernels against pulp-sdk's siracusa
headers, the larger of -O2 and -O3 (see deeploy_mlir/targets/stacks.py).
tests/test_stacks.py measures them again and fails when a kernel is missing
or deeper than its entry (`measure_stacks.py --kernels --check` says the
same, and notes entries above their measurement). Re-measured after
mathfast's dm_mathf.h (exp/log/erf inline, no libm calls): 2026-11-25."""

from __future__ import annotations

KERNEL_PATHS: dict[str, int] = {
    "dm_accumulate_fp32": 16,  # -O2
    "dm_adamw_fp32": 240,  # -O2
    "dm_avgpool2d_fp32": 160,  # -O2
    "dm_avgpool2d_grad_fp32": 176,  # -O2
    "dm_batch_matmul_fp32": 304,  # -O3
    "dm_batchnorm_apply_fp32": 32,  # -O2
    "dm_batchnorm_grad_apply_fp32": 48,  # -O2
    "dm_batchnorm_grad_reduce_fp32": 32,  # -O2
    "dm_batchnorm_stats_fp32": 48,  # -O2
    "dm_binary_fp32": 224,  # -O3
    "dm_cast": 144,  # -O2
    "dm_compare_fp32": 96,  # -O3
    "dm_concat_fp32": 32,  # -O2
    "dm_conv2d_fp32": 448,  # -O2
    "dm_conv2d_grad_input_fp32": 448,  # -O2
    "dm_conv2d_grad_weight_fp32": 384,  # -O3
    "dm_copy": 144,  # -O2
    "dm_dma_copy_in": 208,  # -O3
    "dm_dma_copy_out": 208,  # -O3
    "dm_dropout_fp32": 16,  # -O2
    "dm_dropout_grad_fp32": 16,  # -O2
    "dm_gather_fp32": 32,  # -O2
    "dm_gather_grad_fp32": 32,  # -O2
    "dm_gelu_fp32": 32,  # -O2
    "dm_gelu_grad_fp32": 96,  # -O2
    "dm_gemm_fp32": 192,  # -O2
    "dm_global_avgpool_fp32": 16,  # -O2
    "dm_global_avgpool_grad_fp32": 16,  # -O2
    "dm_gru_grad_params_fp32": 160,  # -O3
    "dm_gru_grad_recur_fp32": 128,  # -O2
    "dm_gru_input_fp32": 32,  # -O2
    "dm_gru_recur_fp32": 208,  # -O2
    "dm_layernorm_fp32": 64,  # -O2
    "dm_layernorm_grad_fp32": 64,  # -O2
    "dm_layernorm_grad_params_fp32": 16,  # -O2
    "dm_log_softmax_fp32": 32,  # -O2
    "dm_log_softmax_grad_fp32": 32,  # -O2
    "dm_lstm_grad_gates_fp32": 64,  # -O2
    "dm_lstm_grad_state_fp32": 32,  # -O2
    "dm_lstm_grad_weights_fp32": 112,  # -O2
    "dm_lstm_step_fp32": 192,  # -O2
    "dm_maxpool2d_fp32": 304,  # -O2
    "dm_maxpool2d_grad_fp32": 48,  # -O2
    "dm_reduce_mean_fp32": 176,  # -O3
    "dm_reduce_sum_fp32": 160,  # -O3
    "dm_relu_fp32": 16,  # -O2
    "dm_relu_grad_fp32": 16,  # -O2
    "dm_sce_grad_fp32": 16,  # -O2
    "dm_sce_ii_grad_fp32": 32,  # -O2
    "dm_sce_ii_logprob_fp32": 32,  # -O2
    "dm_sce_ii_reduce_fp32": 0,  # -O2
    "dm_sce_logprob_fp32": 32,  # -O2
    "dm_sce_reduce_fp32": 0,  # -O2
    "dm_sgd_fp32": 16,  # -O2
    "dm_softmax_fp32": 32,  # -O2
    "dm_softmax_grad_fp32": 32,  # -O2
    "dm_split_fp32": 32,  # -O2
    "dm_step_count_i64": 16,  # -O2
    "dm_transpose_fp32": 240,  # -O3
    "dm_unary_ext_fp32": 16,  # -O2
    "dm_unary_grad_fp32": 16,  # -O2
    "dm_where_fp32": 128,  # -O3
}
