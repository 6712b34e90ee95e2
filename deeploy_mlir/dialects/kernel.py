"""The `kernel` dialect: one call of a runtime_c kernel with its argument struct.

`kernel.call` is what kernel-select (passes/kernel_select.py) turns each
buffer-form compute op into, and all the C printer prints for it: the kernel
(`callee`), the C type of its argument struct (`struct`) and the fields the
call sets, in the order the C initializer lists them. A field's value is a
typed property:

* a pointer or index operand (`#kernel.arg`: the op's next operand; memrefs
  for pointers, an index for a `uint32_t` such as a tile origin),
* `#kernel.null` (a NULL pointer),
* `#kernel.minibatch` (a `uint32_t`: the training step's mini-batch count,
  0, 1, ... over the run, which the harness sets before each step; written
  `minibatch`),
* an unsigned 32-bit integer (`ui32`), a signed 64-bit one (`i64`, written
  `-100 : i64`, for an `int64_t` field), an array of them (`array<i64: ...>`,
  as long as the C array), an `f32` float,
* an enumerator (a string attribute: the C constant's name).

The text form lists the fields with their values in place:

    kernel.call @dm_relu_fp32 dm_unary_args_t {X = %x, Y = %y, size = 12}
        note "training.relu" : memref<3x4xf32, "L2">, memref<3x4xf32, "L2">

The argument structs, their enumerations and the kernels that take them are
listed in STRUCTS, ENUM_FIELDS and KERNELS below, as runtime_c/include's
headers declare them (tests/test_kernel_structs.py checks that they agree);
the verifier checks every call against them. Fields a call does not list are
zero, as in a C initializer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, cast

import numpy as np
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    Signedness,
    StringAttr,
    SymbolRefAttr,
    f32,
    i64,
)
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    opt_prop_def,
    prop_def,
    var_operand_def,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

#: the C type of every field of the argument structs, flattened (a nested
#: struct's fields as `outer.inner`); pointers by their element type
_SIZES_CONV = (
    "batch in_ch in_h in_w out_ch k_h k_w out_h out_w groups "
    "stride_h stride_w dil_h dil_w pad_top pad_left"
)
_POOL_GEOM = (
    "planes in_h in_w out_h out_w k_h k_w stride_h stride_w dil_h dil_w pad_top pad_left "
    "count_include_pad"
)


def _fields(spec: str) -> tuple[tuple[str, str], ...]:
    """'A:float* M,N:uint32_t' -> (("A", "float*"), ("M", "uint32_t"), ("N", "uint32_t"))."""
    out: list[tuple[str, str]] = []
    for item in spec.split():
        names, ctype = item.rsplit(":", 1)
        out += [(n, ctype) for n in names.split(",")]
    return tuple(out)


def _u32s(names: str) -> str:
    return ",".join(names.split()) + ":uint32_t"


_GEMM = (
    "A:float* B:float* C:float* Y:float* M,N,K:uint32_t trans_a,trans_b:uint32_t "
    "alpha,beta:float c_stride_m,c_stride_n:uint32_t acc_Y,partial:uint32_t reset_Y:uint8_t*"
)

STRUCTS: dict[str, tuple[tuple[str, str], ...]] = {
    "dm_gemm_args_t": _fields(_GEMM),
    "dm_batch_matmul_args_t": tuple((f"gemm.{n}", t) for n, t in _fields(_GEMM))
    + _fields(
        "batch_rank:uint32_t batch_shape:uint32_t[4] a_strides:uint32_t[4] "
        "b_strides:uint32_t[4] c_strides:uint32_t[4]"
    ),
    "dm_binary_args_t": _fields(
        "A:float* B:float* Y:float* rank:uint32_t shape:uint32_t[4] a_strides:uint32_t[4] "
        "b_strides:uint32_t[4] op:uint32_t"
    ),
    "dm_unary_args_t": _fields("X:float* Y:float* size:uint32_t"),
    "dm_relu_grad_args_t": _fields("dY:float* X:float* dX:float* size:uint32_t"),
    "dm_gelu_args_t": _fields("X:float* Y:float* size:uint32_t"),
    "dm_gelu_grad_args_t": _fields("dY:float* X:float* dX:float* size:uint32_t"),
    "dm_copy_args_t": _fields("src:void* dst:void* bytes:uint32_t"),
    "dm_sce_args_t": _fields(
        "logits:float* labels:int64_t* log_prob:float* row_loss:float* loss:float* "
        "batch,classes,reduction:uint32_t"
    ),
    "dm_sce_grad_args_t": _fields(
        "dY:float* log_prob:float* labels:int64_t* dX:float* batch,classes,reduction:uint32_t"
    ),
    "dm_reduce_args_t": _fields(
        "X:float* Y:float* rank:uint32_t shape:uint32_t[4] reduce_mask:uint32_t"
    ),
    "dm_accumulate_args_t": _fields(
        "buffer:float* grad:float* reset:uint8_t* out:float* size:uint32_t"
    ),
    "dm_sgd_args_t": _fields("weight:float* grad:float* lr:float* out:float* size:uint32_t"),
    "dm_conv2d_args_t": _fields(
        "X:float* W:float* B:float* Y:float* " + _u32s(_SIZES_CONV) + " relu:uint32_t"
    ),
    "dm_conv2d_grad_args_t": _fields(
        "dY:float* X:float* W:float* dX:float* dW:float* dB:float* "
        + _u32s(_SIZES_CONV)
        + " acc_dX,acc_dW,acc_dB:uint32_t reset_dW,reset_dB:uint8_t*"
    ),
    "dm_pool2d_args_t": _fields(
        "X:float* Y:float* indices:int64_t* "
        + _u32s(_POOL_GEOM)
        + " tile_ch,frame_c,frame_h,frame_w,org_n,org_c,org_h,org_w:uint32_t"
        + " relu_mask:uint32_t"
    ),
    "dm_pool2d_grad_args_t": _fields("dY:float* indices:int64_t* dX:float* " + _u32s(_POOL_GEOM)),
    "dm_global_avgpool_args_t": _fields("X:float* Y:float* planes,size:uint32_t"),
    "dm_global_avgpool_grad_args_t": _fields("dY:float* dX:float* planes,size:uint32_t"),
    "dm_softmax_args_t": _fields("X:float* Y:float* outer,len,inner:uint32_t"),
    "dm_softmax_grad_args_t": _fields("dY:float* Y:float* dX:float* outer,len,inner:uint32_t"),
    "dm_layernorm_args_t": _fields(
        "X:float* scale:float* bias:float* Y:float* mean:float* inv_std:float* "
        "rows,cols:uint32_t epsilon:float"
    ),
    "dm_layernorm_grad_args_t": _fields(
        "dY:float* X:float* scale:float* mean:float* inv_std:float* dX:float* "
        "rows,cols:uint32_t epsilon:float"
    ),
    "dm_layernorm_grad_params_args_t": _fields(
        "dY:float* X:float* mean:float* inv_std:float* dScale:float* dBias:float* "
        "rows,cols,acc:uint32_t"
    ),
    "dm_transpose_args_t": _fields(
        "X:float* Y:float* rank:uint32_t shape:uint32_t[6] perm:uint32_t[6] acc_reset:uint8_t*"
    ),
    "dm_batchnorm_args_t": _fields(
        "X:float* scale:float* bias:float* running_mean_in:float* running_var_in:float* "
        "Y:float* running_mean:float* running_var:float* mean:float* inv_std:float* "
        "N,C,S:uint32_t epsilon,momentum:float"
    ),
    "dm_batchnorm_grad_args_t": _fields(
        "dY:float* X:float* scale:float* mean:float* inv_std:float* dX:float* "
        "dscale:float* dbias:float* N,C,S:uint32_t"
    ),
    "dm_unary_ext_args_t": _fields("X:float* Y:float* size,op:uint32_t alpha,lo,hi:float"),
    "dm_unary_grad_args_t": _fields(
        "dY:float* Z:float* dX:float* size,op:uint32_t alpha,lo,hi:float"
    ),
    # logic family (dm_kernels_ext.h; kernels/logic.py)
    "dm_compare_args_t": _fields(
        "A:void* B:void* Y:uint8_t* rank:uint32_t shape:uint32_t[4] a_strides:uint32_t[4] "
        "b_strides:uint32_t[4] op:uint32_t"
    ),
    "dm_where_args_t": _fields(
        "C:uint8_t* A:float* B:float* Y:float* rank:uint32_t shape:uint32_t[4] "
        "c_strides:uint32_t[4] a_strides:uint32_t[4] b_strides:uint32_t[4]"
    ),
    "dm_cast_args_t": _fields("X:void* Y:void* size:uint32_t op:uint32_t"),
    # the zoo's kernels (dm_kernels_ext.h)
    "dm_adamw_args_t": _fields(
        "weight:float* grad:float* m1:float* m2:float* lr:float* step:int64_t* "
        "update_signal:uint8_t* size:uint32_t alpha,beta,epsilon,weight_decay:float "
        "correct_bias,adam_mode:uint32_t"
    ),
    "dm_step_count_args_t": _fields("count:int64_t* update_signal:uint8_t* out:int64_t*"),
    # dm_kernels_ext.h (issue 20's zoo): losses, log-softmax, dropout
    "dm_sce_ii_args_t": _fields(
        "logits:float* labels:int64_t* log_prob:float* row_loss:float* loss:float* "
        "batch,classes,reduction,has_ignore:uint32_t ignore_index:int64_t"
    ),
    "dm_sce_ii_grad_args_t": _fields(
        "dY:float* log_prob:float* labels:int64_t* dX:float* "
        "batch,classes,reduction,has_ignore:uint32_t ignore_index:int64_t"
    ),
    "dm_log_softmax_args_t": _fields("X:float* Y:float* out:float* outer,len,inner:uint32_t"),
    "dm_dropout_args_t": _fields(
        "X:float* Y:float* mask:uint8_t* size,seed,stream,keep_threshold:uint32_t "
        "scale:float streams,step:uint32_t"
    ),
    "dm_dropout_grad_args_t": _fields(
        "dY:float* mask:uint8_t* dX:float* size:uint32_t scale:float"
    ),
    "dm_gather_args_t": _fields(
        "data:float* indices:int64_t* Y:float* outer,rows,inner,n:uint32_t"
    ),
    "dm_gather_grad_args_t": _fields(
        "dY:float* indices:int64_t* dX:float* outer,rows,inner,n:uint32_t"
    ),
    "dm_concat_args_t": _fields("whole:float* part:float* outer,total,offset,len,inner:uint32_t"),
    "dm_lstm_args_t": _fields(
        "X:float* W:float* R:float* bias:float* H0:float* C0:float* Y:float* Y_h:float* "
        "Y_c:float* C_all:float* iofc:float* S,B,I,H,t:uint32_t"
    ),
    "dm_lstm_grad_args_t": _fields(
        "X:float* W:float* R:float* H0:float* C0:float* Y:float* C_all:float* iofc:float* "
        "dY:float* dY_h:float* dY_c:float* dX:float* dW:float* dR:float* dB:float* "
        "dH0:float* dC0:float* dA:float* S,B,I,H,t:uint32_t"
    ),
}
STRUCTS["dm_gru_args_t"] = _fields(
    "X:float* W:float* R:float* B:float* H0:float* Y:float* Y_h:float* zrh:float* S,N,I,H:uint32_t"
)
STRUCTS["dm_gru_grad_args_t"] = _fields(
    "X:float* W:float* R:float* B:float* H0:float* Y:float* zrh:float* dY:float* "
    "dY_h:float* dX:float* dW:float* dR:float* dB:float* dH0:float* dA:float* "
    "S,N,I,H:uint32_t"
)

_UNARY_EXT_OPS = "SIGMOID TANH LEAKY_RELU CLIP ABS SIGN NEG LOG EXP SQRT RECIPROCAL QUICK_GELU"
_UNARY_GRAD_OPS = "SIGMOID TANH LEAKY_RELU CLIP ABS QUICK_GELU"

#: the enumerations some uint32_t fields hold (their C constants, in order)
ENUMS: dict[str, tuple[str, ...]] = {
    "dm_binary_op_e": tuple(f"DM_BINARY_{k}" for k in ("ADD", "SUB", "MUL", "DIV", "POW")),
    "dm_reduction_e": ("DM_REDUCTION_MEAN", "DM_REDUCTION_SUM"),
    "dm_unary_ext_op_e": tuple(f"DM_UNARY_{k}" for k in _UNARY_EXT_OPS.split()),
    "dm_unary_grad_op_e": tuple(f"DM_UGRAD_{k}" for k in _UNARY_GRAD_OPS.split()),
    "dm_compare_op_e": tuple(
        f"DM_{k}"
        for k in (
            "CMP_GREATER",
            "CMP_GREATER_EQUAL",
            "CMP_LESS",
            "CMP_LESS_EQUAL",
            "CMP_EQUAL",
            "LOGIC_AND",
            "LOGIC_OR",
            "LOGIC_XOR",
        )
    ),
    "dm_cast_op_e": tuple(
        f"DM_CAST_{k}" for k in ("U8_TO_F32", "F32_TO_U8", "I64_TO_F32", "F32_TO_I64", "U8_NOT")
    ),
}
#: (struct, field) -> the enumeration the field holds
ENUM_FIELDS: dict[tuple[str, str], str] = {
    ("dm_binary_args_t", "op"): "dm_binary_op_e",
    ("dm_sce_args_t", "reduction"): "dm_reduction_e",
    ("dm_sce_grad_args_t", "reduction"): "dm_reduction_e",
    ("dm_unary_ext_args_t", "op"): "dm_unary_ext_op_e",
    ("dm_unary_grad_args_t", "op"): "dm_unary_grad_op_e",
    ("dm_compare_args_t", "op"): "dm_compare_op_e",
    ("dm_cast_args_t", "op"): "dm_cast_op_e",
    ("dm_sce_ii_args_t", "reduction"): "dm_reduction_e",
    ("dm_sce_ii_grad_args_t", "reduction"): "dm_reduction_e",
}

#: every kernel (a `void NAME(void *args)` of runtime_c) and the struct it takes
KERNELS: dict[str, str] = {
    "dm_gemm_fp32": "dm_gemm_args_t",
    "dm_batch_matmul_fp32": "dm_batch_matmul_args_t",
    "dm_binary_fp32": "dm_binary_args_t",
    "dm_relu_fp32": "dm_unary_args_t",
    "dm_relu_grad_fp32": "dm_relu_grad_args_t",
    "dm_gelu_fp32": "dm_gelu_args_t",
    "dm_gelu_grad_fp32": "dm_gelu_grad_args_t",
    "dm_copy": "dm_copy_args_t",
    "dm_sce_logprob_fp32": "dm_sce_args_t",
    "dm_sce_reduce_fp32": "dm_sce_args_t",
    "dm_sce_grad_fp32": "dm_sce_grad_args_t",
    "dm_reduce_sum_fp32": "dm_reduce_args_t",
    "dm_reduce_mean_fp32": "dm_reduce_args_t",
    "dm_accumulate_fp32": "dm_accumulate_args_t",
    "dm_sgd_fp32": "dm_sgd_args_t",
    "dm_conv2d_fp32": "dm_conv2d_args_t",
    "dm_conv2d_grad_input_fp32": "dm_conv2d_grad_args_t",
    "dm_conv2d_grad_weight_fp32": "dm_conv2d_grad_args_t",
    "dm_maxpool2d_fp32": "dm_pool2d_args_t",
    "dm_avgpool2d_fp32": "dm_pool2d_args_t",
    "dm_maxpool2d_grad_fp32": "dm_pool2d_grad_args_t",
    "dm_avgpool2d_grad_fp32": "dm_pool2d_grad_args_t",
    "dm_global_avgpool_fp32": "dm_global_avgpool_args_t",
    "dm_global_avgpool_grad_fp32": "dm_global_avgpool_grad_args_t",
    "dm_softmax_fp32": "dm_softmax_args_t",
    "dm_softmax_grad_fp32": "dm_softmax_grad_args_t",
    "dm_layernorm_fp32": "dm_layernorm_args_t",
    "dm_layernorm_grad_fp32": "dm_layernorm_grad_args_t",
    "dm_layernorm_grad_params_fp32": "dm_layernorm_grad_params_args_t",
    "dm_transpose_fp32": "dm_transpose_args_t",
    "dm_batchnorm_stats_fp32": "dm_batchnorm_args_t",
    "dm_batchnorm_apply_fp32": "dm_batchnorm_args_t",
    "dm_batchnorm_grad_reduce_fp32": "dm_batchnorm_grad_args_t",
    "dm_batchnorm_grad_apply_fp32": "dm_batchnorm_grad_args_t",
    "dm_unary_ext_fp32": "dm_unary_ext_args_t",
    "dm_unary_grad_fp32": "dm_unary_grad_args_t",
    "dm_compare_fp32": "dm_compare_args_t",
    "dm_where_fp32": "dm_where_args_t",
    "dm_cast": "dm_cast_args_t",
    "dm_adamw_fp32": "dm_adamw_args_t",
    "dm_step_count_i64": "dm_step_count_args_t",
    "dm_sce_ii_logprob_fp32": "dm_sce_ii_args_t",
    "dm_sce_ii_reduce_fp32": "dm_sce_ii_args_t",
    "dm_sce_ii_grad_fp32": "dm_sce_ii_grad_args_t",
    "dm_log_softmax_fp32": "dm_log_softmax_args_t",
    "dm_log_softmax_grad_fp32": "dm_log_softmax_args_t",
    "dm_dropout_fp32": "dm_dropout_args_t",
    "dm_dropout_grad_fp32": "dm_dropout_grad_args_t",
    "dm_gather_fp32": "dm_gather_args_t",
    "dm_gather_grad_fp32": "dm_gather_grad_args_t",
    "dm_concat_fp32": "dm_concat_args_t",
    "dm_split_fp32": "dm_concat_args_t",
    "dm_lstm_step_fp32": "dm_lstm_args_t",
    "dm_lstm_grad_gates_fp32": "dm_lstm_grad_args_t",
    "dm_lstm_grad_state_fp32": "dm_lstm_grad_args_t",
    "dm_lstm_grad_weights_fp32": "dm_lstm_grad_args_t",
}
KERNELS["dm_gru_input_fp32"] = "dm_gru_args_t"
KERNELS["dm_gru_recur_fp32"] = "dm_gru_args_t"
KERNELS["dm_gru_grad_recur_fp32"] = "dm_gru_grad_args_t"
KERNELS["dm_gru_grad_params_fp32"] = "dm_gru_grad_args_t"

#: the memref element type each pointer field's C type points to (void: any)
_POINTEE = {"float*": "f32", "int64_t*": "i64", "uint8_t*": "i1"}

U32 = IntegerType(32, Signedness.UNSIGNED)
_U32_MAX = (1 << 32) - 1


@irdl_attr_definition
class ArgAttr(ParametrizedAttribute):
    """A field set to the call's next operand (a pointer, or an index value)."""

    name = "kernel.arg"


@irdl_attr_definition
class NullAttr(ParametrizedAttribute):
    """A pointer field set to NULL."""

    name = "kernel.null"


@irdl_attr_definition
class MinibatchAttr(ParametrizedAttribute):
    """A uint32_t field set to the training step's mini-batch count."""

    name = "kernel.minibatch"


ARG = ArgAttr()
NULL = NullAttr()
MINIBATCH = MinibatchAttr()


def u32(v: int) -> IntegerAttr:
    return IntegerAttr(v, U32)


def u32_array(vals: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(vals))


def array_values(a: DenseArrayBase) -> list[int]:
    """The integers of an array field's value."""
    return [int(v) for v in cast(Any, a).get_values()]


def f32_attr(v: float) -> FloatAttr:
    return FloatAttr(float(np.float32(v)), f32)


def _c_array_len(ctype: str) -> int | None:
    if ctype.endswith("]"):
        return int(ctype[ctype.index("[") + 1 : -1])
    return None


@irdl_op_definition
class CallOp(IRDLOperation):
    """One call of a runtime_c kernel, forked over the cluster's cores, on an
    argument struct whose fields are `fields` (names) set to `values`."""

    name = "kernel.call"

    callee = prop_def(SymbolRefAttr)
    struct = prop_def(StringAttr)
    fields = prop_def(ArrayAttr[StringAttr])
    values = prop_def(ArrayAttr[Attribute])
    #: the C comment of the call (the op it came from)
    note = opt_prop_def(StringAttr)
    args = var_operand_def()

    ARG: ClassVar[ArgAttr] = ARG

    def __init__(
        self,
        callee: str,
        struct: str,
        fields: Sequence[tuple[str, Attribute | SSAValue]],
        note: str | None = None,
    ):
        """`fields`: (name, value) in C order; an SSA value becomes an operand."""
        operands: list[SSAValue] = []
        values: list[Attribute] = []
        for _, v in fields:
            if isinstance(v, SSAValue):
                operands.append(v)
                values.append(ARG)
            else:
                values.append(v)
        props: dict[str, Attribute] = {
            "callee": SymbolRefAttr(callee),
            "struct": StringAttr(struct),
            "fields": ArrayAttr([StringAttr(n) for n, _ in fields]),
            "values": ArrayAttr(values),
        }
        if note is not None:
            props["note"] = StringAttr(note)
        super().__init__(operands=[operands], properties=props)

    @property
    def kernel(self) -> str:
        return self.callee.string_value()

    def items(self) -> list[tuple[str, Attribute | SSAValue]]:
        """(field name, value) in order, the operand itself for a `#kernel.arg`."""
        out: list[tuple[str, Attribute | SSAValue]] = []
        it = iter(self.args)
        for n, v in zip(self.fields.data, self.values.data, strict=False):
            out.append((n.data, next(it, v) if isinstance(v, ArgAttr) else v))
        return out

    # ---- verification ----------------------------------------------------

    def verify_(self) -> None:
        where = f"kernel.call @{self.kernel}"
        struct = self.struct.data
        if struct not in STRUCTS:
            raise VerifyException(
                f"{where}: unknown argument struct '{struct}' (runtime_c's structs: "
                f"{', '.join(sorted(STRUCTS))})"
            )
        want = KERNELS.get(self.kernel)
        if want is None:
            raise VerifyException(
                f"{where}: unknown kernel (runtime_c's kernels: {', '.join(sorted(KERNELS))})"
            )
        if want != struct:
            raise VerifyException(f"{where} takes a {want}, not a {struct}")
        if len(self.fields.data) != len(self.values.data):
            raise VerifyException(
                f"{where}: {len(self.fields.data)} field names but {len(self.values.data)} values"
            )
        n_args = sum(isinstance(v, ArgAttr) for v in self.values.data)
        if n_args != len(self.args):
            raise VerifyException(
                f"{where}: {n_args} fields take an operand (#kernel.arg) but the call has "
                f"{len(self.args)} operands"
            )
        ctypes = dict(STRUCTS[struct])
        seen: set[str] = set()
        for name, value in self.items():
            if name not in ctypes:
                raise VerifyException(
                    f"{where}: {struct} has no field '{name}' (its fields: {', '.join(ctypes)})"
                )
            if name in seen:
                raise VerifyException(f"{where}: field '{name}' is set twice")
            seen.add(name)
            why = _value_problem(ctypes[name], ENUM_FIELDS.get((struct, name)), value)
            if why is not None:
                raise VerifyException(f"{where}: field '{name}' ({ctypes[name]}) {why}")

    # ---- text form -------------------------------------------------------

    def print(self, printer: Printer) -> None:
        printer.print_string(f" @{self.kernel} {self.struct.data} {{")
        types: list[Attribute] = []
        for i, (name, value) in enumerate(self.items()):
            printer.print_string(", " if i else "")
            printer.print_string(f"{name} = ")
            if isinstance(value, SSAValue):
                printer.print_operand(value)
                types.append(value.type)
            else:
                printer.print_string(_value_text(value))
        printer.print_string("}")
        if self.note is not None:
            printer.print_string(" note ")
            printer.print_string_literal(self.note.data)
        printer.print_op_attributes(self.attributes)
        if types:
            printer.print_string(" : ")
            printer.print_list(types, printer.print_attribute)

    @classmethod
    def parse(cls, parser: Parser) -> CallOp:
        callee = parser.parse_symbol_name().data
        struct = parser.parse_identifier()
        items: list[tuple[str, object]] = []

        def item() -> None:
            name = parser.parse_identifier()
            parser.parse_punctuation("=")
            items.append((name, _parse_value(parser)))

        parser.parse_comma_separated_list(parser.Delimiter.BRACES, item)
        note = parser.parse_str_literal() if parser.parse_optional_keyword("note") else None
        attrs = parser.parse_optional_attr_dict()
        unresolved = [v for _, v in items if isinstance(v, UnresolvedOperand)]
        types: list[Attribute] = []
        if parser.parse_optional_punctuation(":"):
            types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
        if len(types) != len(unresolved):
            parser.raise_error(
                f"expected one type per operand field ({len(unresolved)}), got {len(types)}"
            )
        resolved = iter(
            parser.resolve_operand(u, t) for u, t in zip(unresolved, types, strict=True)
        )
        fields: list[tuple[str, Attribute | SSAValue]] = [
            (n, next(resolved) if isinstance(v, UnresolvedOperand) else cast(Attribute, v))
            for n, v in items
        ]
        op = cls(callee, struct, fields, note)
        op.attributes.update(attrs)
        return op


def _pointer_problem(ctype: str, value: Attribute | SSAValue) -> str | None:
    if isinstance(value, NullAttr):
        return None
    if not isinstance(value, SSAValue) or not isinstance(value.type, MemRefType):
        return "takes a memref operand or #kernel.null"
    elem = str(cast(MemRefType[Attribute], value.type).element_type)
    want = _POINTEE.get(ctype)
    if want is not None and elem != want:
        return f"points to {want} elements, the operand holds {elem}"
    return None


def _array_problem(n: int, value: Attribute | SSAValue) -> str | None:
    if not isinstance(value, DenseArrayBase):
        return f"takes an array of {n} integers"
    vals = array_values(value)
    if len(vals) != n:
        return f"takes an array of {n} integers, got {len(vals)}"
    if any(not 0 <= v <= _U32_MAX for v in vals):
        return "takes unsigned 32-bit integers"
    return None


def _u32_problem(enum: str | None, value: Attribute | SSAValue) -> str | None:
    if enum is not None:
        if not isinstance(value, StringAttr) or value.data not in ENUMS[enum]:
            return f"takes a {enum} constant ({', '.join(ENUMS[enum])})"
        return None
    if isinstance(value, SSAValue):
        if isinstance(value.type, IndexType):
            return None
        return "takes an index operand or a ui32 integer"
    if isinstance(value, MinibatchAttr):
        return None
    if not isinstance(value, IntegerAttr) or value.type != U32:
        return "takes a ui32 integer or an index operand"
    return None


def _value_problem(ctype: str, enum: str | None, value: Attribute | SSAValue) -> str | None:
    """Why `value` cannot initialize a field of C type `ctype` (None: it can)."""
    n = _c_array_len(ctype)
    if ctype.endswith("*"):
        return _pointer_problem(ctype, value)
    if n is not None:
        return _array_problem(n, value)
    if ctype == "int64_t":
        if not isinstance(value, IntegerAttr) or value.type != i64:
            return "takes an i64 integer"
        return None
    if ctype == "float":
        if not isinstance(value, FloatAttr) or value.type != f32:
            return "takes an f32 float"
        if not np.isfinite(value.value.data):
            return "takes a finite float"
        return None
    return _u32_problem(enum, value)


def float_text(v: float) -> str:
    """A float32 value, shortest round-tripping form (what c_float prints, without the `f`)."""
    return np.format_float_scientific(np.float32(v), unique=True, exp_digits=2)


def _value_text(value: Attribute) -> str:
    match value:
        case NullAttr():
            return "null"
        case MinibatchAttr():
            return "minibatch"
        case IntegerAttr() if value.type == i64:
            return f"{value.value.data} : i64"
        case IntegerAttr():
            return str(value.value.data)
        case DenseArrayBase():
            return "[" + ", ".join(str(v) for v in array_values(value)) + "]"
        case FloatAttr():
            return float_text(value.value.data)
        case StringAttr():
            return value.data
        case _:
            return f"<{value}>"


def _parse_value(parser: Parser) -> object:
    """An operand, `null`, `minibatch`, an integer, a float, `[ints]` or an enumerator."""
    operand = parser.parse_optional_unresolved_operand()
    if operand is not None:
        return operand
    if parser.parse_optional_keyword("null"):
        return NULL
    if parser.parse_optional_keyword("minibatch"):
        return MINIBATCH
    if parser.parse_optional_punctuation("[") is not None:
        vals: list[int] = []
        if parser.parse_optional_punctuation("]") is None:
            vals = parser.parse_comma_separated_list(
                parser.Delimiter.NONE, lambda: parser.parse_integer(allow_boolean=False)
            )
            parser.parse_punctuation("]")
        return u32_array(vals)
    num = parser.parse_optional_number()
    if isinstance(num, float):
        return f32_attr(num)
    if isinstance(num, int):
        if parser.parse_optional_punctuation(":") is not None:
            parser.parse_keyword("i64")
            return IntegerAttr(num, i64)
        if not 0 <= num <= _U32_MAX:
            parser.raise_error(f"{num} is not an unsigned 32-bit integer")
        return u32(num)
    ident = parser.parse_optional_identifier()
    if ident is not None:
        return StringAttr(ident)
    parser.raise_error(
        "expected a field value: an operand, null, an integer, a float, [ints] or an enumerator"
    )


Kernel = Dialect("kernel", [CallOp], [ArgAttr, NullAttr, MinibatchAttr])
