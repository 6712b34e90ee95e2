"""The model zoo of issue 20: small PyTorch models a user would write, one
layer, loss or optimizer choice each, exported by onnxruntime-training's
artifact generator with the numbers its own training API computes for them.

    python examples/zoo.py OUT                    # every model into OUT/<name>/
    python examples/zoo.py OUT --only mlp_adamw   # one model (a comma list: several)
    python examples/zoo.py OUT --list             # the names and what each one tries
    python examples/zoo.py OUT --coverage         # export, then the Markdown coverage table
    python examples/zoo.py OUT --coverage --no-export   # the table of an existing OUT
    python examples/zoo.py OUT --coverage --run   # + train those that lower, vs the reference

OUT is any directory (``/out/`` and ``examples/published/`` are git-ignored;
nothing is written inside the checkout unless asked).  Each OUT/<name>/ holds
what examples/make_models.py writes for its models: training_model.onnx,
eval_model.onnx, optimizer_model.onnx and checkpoint (``generate_artifacts``
with the model's loss -- a LossType, an onnxblock loss, or none when the
model computes its own loss from (input, labels) -- and optimizer: SGD, or
AdamW), params.npz (the initial parameters), data.npz (``input``
[STEPS*ACCUM, ...] float32, or int64 token ids, and ``labels`` int64 or
``target`` float32) and reference.json: ``losses`` (per mini-batch) and
``params`` after STEPS optimizer steps of ACCUM accumulated mini-batches,
from onnxruntime-training's training API (examples/ort_reference.py's loop,
single-threaded), plus the model's settings.  Where torch can train the same
model the same way (every model without random dropout), the script also
trains it in torch float32 (summed gradients over the ACCUM mini-batches,
then ``p -= lr g`` or Hugging Face's AdamW, which onnxruntime's is)
and fails unless the two agree within rtol 1e-4, atol 1e-5 (3e-4 / 3e-5 for
the recurrent and batch-normalized ones); ``torch_max_abs_diff`` records the
largest difference.

``--coverage`` prints, for every model, the ONNX ops (domain:op type) of its
training_model.onnx and optimizer_model.onnx and what ``deeploy-mlir lower``
(the CLI of the checkout that runs the script) says of it: ``ok``, or the
first line of its error (with ``--run``, also whether ``deeploy-mlir run``
on the host emulation trains each model that lowers like the reference,
rtol 1e-4, atol 1e-5); then, for every op the zoo uses, how many models
need it and whether ``lower`` refuses it.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
import torch
from torch import nn
from torch.nn import functional as F

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import ort_reference as ort  # noqa: E402  (artifacts, onnxruntime-training loop, JSON layout)

STEPS, ACCUM = 3, 2
SGD_LR, ADAMW_LR = 0.05, 0.01
XCHECK_TOL = {"rtol": 1e-4, "atol": 1e-5}
LOOSE_TOL = {"rtol": 3e-4, "atol": 3e-5}
#: onnxruntime-training's AdamW block's defaults (onnxblock.optim.AdamW)
ADAMW_BETAS, ADAMW_EPS = (0.9, 0.999), 1e-6
IGNORE = -100  # torch's default ignore_index, and the label the zoo's data ignores


# --- the models -------------------------------------------------------------------


@dataclass(frozen=True)
class Model:
    name: str
    what: str  # one line: the choice the model tries
    build: Callable[[], nn.Module]
    input_shape: tuple[int, ...]  # batch first
    #: "ce", "mse", "l1", "bce", "ce_ignore" (CrossEntropyLoss(ignore_index) block,
    #: some labels ignored), "ce_sum" (reduction sum), or "inside": the module's
    #: forward(input, labels) returns the loss
    loss: str = "ce"
    optim: str = "sgd"  # "sgd", "adamw" or "adamw_wd" (weight decay 0.01)
    classes: int = 4  # of the labels (ce, inside)
    vocab: int = 0  # > 0: the input is int64 token ids below vocab
    #: when not empty, only the parameters whose name contains one of these train
    train_only: tuple[str, ...] = ()
    #: labels for an "inside" loss: "class" [batch] (or [batch, tokens] when the
    #: model says so with label_tokens), some set to IGNORE when ignore is set
    label_tokens: int = 0
    ignore: bool = False
    #: the torch cross-check: "strict", "loose" or "" (none: random dropout)
    xcheck: str = "strict"
    seed: int = 0

    def trainable(self, param: str) -> bool:
        return not self.train_only or any(t in param for t in self.train_only)

    @property
    def targets(self) -> str:
        return "target" if self.loss in ("mse", "l1", "bce") else "labels"

    @property
    def lr(self) -> float:
        return SGD_LR if self.optim == "sgd" else ADAMW_LR


def mlp(act: nn.Module | None = None, hidden: int = 16, features: int = 12, classes: int = 4):
    layers: list[nn.Module] = [nn.Linear(features, hidden)]
    if act is not None:
        layers.append(act)
    layers.append(nn.Linear(hidden, classes))
    return nn.Sequential(*layers)


class Silu(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(x)


class InsideLoss(nn.Module):
    """body(x) -> logits, then loss(logits, labels) in the graph."""

    def __init__(self, body: nn.Module, loss: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]):
        super().__init__()
        self.body = body
        self.loss = loss

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return self.loss(self.body(x), y)


def smooth_ce(logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """F.cross_entropy(label_smoothing=0.1), which torch.onnx refuses, spelled out."""
    eps = 0.1
    uniform = -F.log_softmax(logits, dim=-1).mean(dim=-1).mean()
    return (1 - eps) * F.cross_entropy(logits, y) + eps * uniform


def nll_of_log_softmax(logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return F.nll_loss(F.log_softmax(logits, dim=-1), y)


def token_ce(logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Cross-entropy over every token: logits [B, T, C], labels [B, T]."""
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))


def huber(pred: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """F.smooth_l1_loss against the one-hot labels, which torch.onnx refuses,
    spelled out (Abs, Less, Where)."""
    d = pred - F.one_hot(y, pred.shape[-1]).to(pred.dtype)
    a = d.abs()
    return torch.where(a < 1.0, 0.5 * d * d, a - 0.5).mean()


class TokenMean(nn.Module):
    """[B, T, F] -> Linear per token -> mean over the tokens -> Linear."""

    def __init__(self, features: int = 6, dim: int = 8, classes: int = 4) -> None:
        super().__init__()
        self.inp = nn.Linear(features, dim)
        self.out = nn.Linear(dim, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(torch.relu(self.inp(x)).mean(dim=1))


class EmbedMean(nn.Module):
    def __init__(self, vocab: int = 20, dim: int = 8, classes: int = 4) -> None:
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.out = nn.Linear(dim, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(self.emb(x).mean(dim=1))


class EmbedTokens(nn.Module):
    """Embedding -> Linear per token: logits [B, T, vocab] (a tiny language model)."""

    def __init__(self, vocab: int = 12, dim: int = 8) -> None:
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.out = nn.Linear(dim, vocab)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(torch.tanh(self.emb(x)))


class Attn(nn.Module):
    """nn.MultiheadAttention (self-attention, batch first), mean over tokens, Linear."""

    def __init__(self, dim: int = 8, heads: int = 2, classes: int = 4) -> None:
        super().__init__()
        self.mha = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.out = nn.Linear(dim, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y, _ = self.mha(x, x, x, need_weights=False)
        return self.out(y.mean(dim=1))


class Encoder(nn.Module):
    """nn.TransformerEncoderLayer (batch first, no dropout), mean over tokens, Linear."""

    def __init__(self, dim: int = 8, heads: int = 2, classes: int = 4, norm_first: bool = False):
        super().__init__()
        self.block = nn.TransformerEncoderLayer(
            dim, heads, 2 * dim, dropout=0.0, batch_first=True, norm_first=norm_first
        )
        self.out = nn.Linear(dim, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(self.block(x).mean(dim=1))


class Recurrent(nn.Module):
    """nn.GRU / nn.LSTM / nn.RNN (batch first), its last hidden state, Linear."""

    def __init__(self, kind: str, features: int = 4, hidden: int = 6, classes: int = 4):
        super().__init__()
        self.rnn = {"gru": nn.GRU, "lstm": nn.LSTM, "rnn": nn.RNN}[kind](
            features, hidden, batch_first=True
        )
        self.out = nn.Linear(hidden, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y, _ = self.rnn(x)
        return self.out(y[:, -1])


class Branches(nn.Module):
    """Two Linear branches concatenated (Concat; its gradient splits)."""

    def __init__(self, features: int = 12, classes: int = 4) -> None:
        super().__init__()
        self.a = nn.Linear(features, 6)
        self.b = nn.Linear(features, 5)
        self.out = nn.Linear(11, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(torch.cat([torch.relu(self.a(x)), torch.tanh(self.b(x))], dim=1))


class Chunks(nn.Module):
    """One Linear split in two (Split; its gradient concatenates), a gated unit."""

    def __init__(self, features: int = 12, classes: int = 4) -> None:
        super().__init__()
        self.inp = nn.Linear(features, 16)
        self.out = nn.Linear(8, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a, b = self.inp(x).chunk(2, dim=1)
        return self.out(a * torch.sigmoid(b))


class Residual(nn.Module):
    def __init__(self, features: int = 12, hidden: int = 12, classes: int = 4) -> None:
        super().__init__()
        self.a = nn.Linear(features, hidden)
        self.b = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.a(x))
        return self.out(h + torch.relu(self.b(h)))


class Unsqueezed(nn.Module):
    """Linear, Unsqueeze to [B, 1, H], a 1-D convolution, Squeeze, Linear."""

    def __init__(self, features: int = 12, classes: int = 4) -> None:
        super().__init__()
        self.a = nn.Linear(features, 10)
        self.conv = nn.Conv1d(1, 1, 3, padding=1)
        self.out = nn.Linear(10, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.conv(torch.relu(self.a(x)).unsqueeze(1)).squeeze(1)
        return self.out(h)


class ReshapeHead(nn.Module):
    """Conv, then x.reshape(b, -1) (Reshape, not Flatten), Linear."""

    def __init__(self, classes: int = 4) -> None:
        super().__init__()
        self.conv = nn.Conv2d(2, 4, 3, padding=1)
        self.out = nn.Linear(4 * 6 * 6, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.conv(x))
        return self.out(y.reshape(y.shape[0], -1))


def cnn(*mid: nn.Module, cin: int = 2, c: int = 4, pool: nn.Module | None = None, classes: int = 4):
    """Conv 3x3 (cin -> c), ReLU, *mid, pool (default global average), Flatten, Linear."""
    pool = pool if pool is not None else nn.AdaptiveAvgPool2d(1)
    flat = c if isinstance(pool, nn.AdaptiveAvgPool2d) else c * 9  # 6x6 pooled by 2
    return nn.Sequential(
        nn.Conv2d(cin, c, 3, padding=1),
        nn.ReLU(),
        *mid,
        pool,
        nn.Flatten(1),
        nn.Linear(flat, classes),
    )


def ds_cnn(c: int = 8, classes: int = 4) -> nn.Module:
    """Depthwise-separable CNN: strided conv, 2 x (depthwise 3x3, pointwise 1x1)."""
    layers: list[nn.Module] = [nn.Conv2d(1, c, 3, 2, 1), nn.ReLU()]
    for _ in range(2):
        layers += [nn.Conv2d(c, c, 3, 1, 1, groups=c), nn.ReLU(), nn.Conv2d(c, c, 1), nn.ReLU()]
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(1), nn.Linear(c, classes)]
    return nn.Sequential(*layers)


def deep(act: type[nn.Module], n: int = 4, w: int = 10) -> nn.Module:
    layers: list[nn.Module] = [nn.Linear(12, w), act()]
    for _ in range(n - 2):
        layers += [nn.Linear(w, w), act()]
    layers.append(nn.Linear(w, 4))
    return nn.Sequential(*layers)


B = 4  # batch of the dense models
MLP_IN = (B, 12)
SEQ_IN = (2, 5, 8)  # [batch, tokens, dim]
IMG_IN = (2, 2, 6, 6)


def zoo() -> list[Model]:
    ms = [
        # -- optimizers
        Model(
            "mlp_sgd",
            "Linear-ReLU-Linear, CrossEntropyLoss, SGD (the baseline)",
            lambda: mlp(nn.ReLU()),
            MLP_IN,
        ),
        Model(
            "mlp_adamw",
            "OptimType.AdamW (onnxruntime's defaults)",
            lambda: mlp(nn.ReLU()),
            MLP_IN,
            optim="adamw",
        ),
        Model(
            "mlp_adamw_wd",
            "AdamW with weight_decay 0.01",
            lambda: mlp(nn.ReLU()),
            MLP_IN,
            optim="adamw_wd",
        ),
        Model(
            "linear_nobias",
            "one Linear without bias (logistic regression)",
            lambda: nn.Linear(12, 4, bias=False),
            MLP_IN,
        ),
        # -- activations
        Model("mlp_sigmoid", "nn.Sigmoid", lambda: mlp(nn.Sigmoid()), MLP_IN),
        Model("mlp_tanh", "nn.Tanh", lambda: mlp(nn.Tanh()), MLP_IN),
        Model("mlp_leaky_relu", "nn.LeakyReLU(0.1)", lambda: mlp(nn.LeakyReLU(0.1)), MLP_IN),
        Model("mlp_relu6", "nn.ReLU6 (Clip)", lambda: mlp(nn.ReLU6()), MLP_IN),
        Model(
            "mlp_hardtanh",
            "nn.Hardtanh(-0.5, 0.5) (Clip)",
            lambda: mlp(nn.Hardtanh(-0.5, 0.5)),
            MLP_IN,
        ),
        Model("mlp_gelu", "nn.GELU", lambda: mlp(nn.GELU()), MLP_IN),
        Model(
            "mlp_gelu_tanh",
            "nn.GELU(approximate='tanh')",
            lambda: mlp(nn.GELU(approximate="tanh")),
            MLP_IN,
        ),
        Model("mlp_silu_manual", "x * sigmoid(x) written out", lambda: mlp(Silu()), MLP_IN),
        Model("mlp_silu", "nn.SiLU", lambda: mlp(nn.SiLU()), MLP_IN),
        Model("deep_tanh", "four Linear layers with Tanh", lambda: deep(nn.Tanh), MLP_IN),
        # -- regularization, normalization
        Model(
            "mlp_dropout",
            "nn.Dropout(0.25) (random masks)",
            lambda: mlp(nn.Sequential(nn.ReLU(), nn.Dropout(0.25))),
            MLP_IN,
            xcheck="",
        ),
        Model(
            "mlp_dropout0",
            "nn.Dropout(0.0)",
            lambda: mlp(nn.Sequential(nn.ReLU(), nn.Dropout(0.0))),
            MLP_IN,
        ),
        Model(
            "mlp_batchnorm1d",
            "nn.BatchNorm1d in training mode",
            lambda: mlp(nn.Sequential(nn.BatchNorm1d(16), nn.ReLU())),
            MLP_IN,
            xcheck="loose",
        ),
        Model(
            "mlp_layernorm",
            "nn.LayerNorm",
            lambda: mlp(nn.Sequential(nn.LayerNorm(16), nn.ReLU())),
            MLP_IN,
        ),
        Model(
            "cnn_batchnorm2d",
            "Conv, nn.BatchNorm2d in training mode",
            lambda: cnn(nn.BatchNorm2d(4), nn.ReLU()),
            IMG_IN,
            xcheck="loose",
        ),
        # -- losses
        Model(
            "loss_mse", "LossType.MSELoss", lambda: mlp(nn.ReLU(), classes=3), MLP_IN, loss="mse"
        ),
        Model(
            "loss_l1",
            "LossType.L1Loss (Abs, Sign)",
            lambda: mlp(nn.ReLU(), classes=3),
            MLP_IN,
            loss="l1",
        ),
        Model(
            "loss_bce_logits",
            "LossType.BCEWithLogitsLoss",
            lambda: mlp(nn.ReLU(), classes=3),
            MLP_IN,
            loss="bce",
        ),
        Model(
            "loss_ce_ignore",
            "CrossEntropyLoss(ignore_index=-100) block, some labels ignored",
            lambda: mlp(nn.ReLU()),
            MLP_IN,
            loss="ce_ignore",
        ),
        Model(
            "loss_ce_sum",
            "CrossEntropyLoss(reduction='sum') block",
            lambda: mlp(nn.ReLU()),
            MLP_IN,
            loss="ce_sum",
        ),
        Model(
            "inside_ce",
            "F.cross_entropy in the model (ignore_index=-100 exported)",
            lambda: InsideLoss(mlp(nn.ReLU()), F.cross_entropy),
            MLP_IN,
            loss="inside",
        ),
        Model(
            "inside_ce_ignored",
            "F.cross_entropy in the model, some labels -100",
            lambda: InsideLoss(mlp(nn.ReLU()), F.cross_entropy),
            MLP_IN,
            loss="inside",
            ignore=True,
        ),
        Model(
            "inside_ce_smooth",
            "label smoothing 0.1 written out (torch exports no label_smoothing)",
            lambda: InsideLoss(mlp(nn.ReLU()), smooth_ce),
            MLP_IN,
            loss="inside",
        ),
        Model(
            "inside_nll",
            "F.log_softmax + F.nll_loss",
            lambda: InsideLoss(mlp(nn.ReLU()), nll_of_log_softmax),
            MLP_IN,
            loss="inside",
        ),
        Model(
            "inside_huber",
            "Huber loss (torch.where) against one-hot labels",
            lambda: InsideLoss(mlp(nn.ReLU()), huber),
            MLP_IN,
            loss="inside",
        ),
        # -- sequences
        Model("token_mean", "Linear per token, x.mean(dim=1)", TokenMean, (2, 5, 6)),
        Model("embedding_mean", "nn.Embedding, mean over tokens", EmbedMean, (3, 5), vocab=20),
        Model(
            "embedding_lm",
            "nn.Embedding, Tanh, per-token cross-entropy in the model",
            lambda: InsideLoss(EmbedTokens(), token_ce),
            (2, 5),
            loss="inside",
            vocab=12,
            classes=12,
            label_tokens=5,
        ),
        Model("mha", "nn.MultiheadAttention (batch first)", Attn, SEQ_IN),
        Model(
            "encoder_post_norm", "nn.TransformerEncoderLayer (post-norm, ReLU MLP)", Encoder, SEQ_IN
        ),
        Model(
            "encoder_pre_norm",
            "nn.TransformerEncoderLayer(norm_first=True)",
            lambda: Encoder(norm_first=True),
            SEQ_IN,
        ),
        Model(
            "gru", "nn.GRU, last hidden state", lambda: Recurrent("gru"), (2, 5, 4), xcheck="loose"
        ),
        Model(
            "lstm",
            "nn.LSTM, last hidden state",
            lambda: Recurrent("lstm"),
            (2, 5, 4),
            xcheck="loose",
        ),
        # -- shapes, branches
        Model("branches_concat", "two branches torch.cat'ed", Branches, MLP_IN),
        Model("chunk_gate", "x.chunk(2) gated unit (Split)", Chunks, MLP_IN),
        Model("residual_mlp", "a residual Linear block", Residual, MLP_IN),
        Model("unsqueeze_conv1d", "unsqueeze, nn.Conv1d, squeeze", Unsqueezed, MLP_IN),
        # -- convolutions
        Model(
            "cnn_gap", "Conv, ReLU, global average pooling, Flatten, Linear", lambda: cnn(), IMG_IN
        ),
        Model(
            "cnn_maxpool",
            "Conv, ReLU, MaxPool 2x2, Flatten, Linear",
            lambda: cnn(pool=nn.MaxPool2d(2)),
            IMG_IN,
        ),
        Model(
            "cnn_avgpool",
            "Conv, ReLU, AvgPool 2x2, Flatten, Linear",
            lambda: cnn(pool=nn.AvgPool2d(2)),
            IMG_IN,
        ),
        Model("cnn_reshape", "Conv, x.reshape(b, -1), Linear", ReshapeHead, IMG_IN),
        Model("ds_cnn", "depthwise-separable CNN", ds_cnn, (2, 1, 10, 10)),
        Model(
            "ds_cnn_adamw", "depthwise-separable CNN, AdamW", ds_cnn, (2, 1, 10, 10), optim="adamw"
        ),
        # -- what trains
        Model(
            "frozen_first",
            "first Linear frozen (frozen_params)",
            lambda: mlp(nn.ReLU()),
            MLP_IN,
            train_only=("2.",),
        ),
        Model(
            "bias_only",
            "only the biases train (BitFit)",
            lambda: deep(nn.ReLU, 3),
            MLP_IN,
            train_only=("bias",),
        ),
        Model(
            "cnn_head_only",
            "CNN with only its Linear head training",
            lambda: cnn(),
            IMG_IN,
            train_only=("4.",),
        ),
        Model(
            "frozen_adamw",
            "first Linear frozen, AdamW",
            lambda: mlp(nn.Tanh()),
            MLP_IN,
            optim="adamw",
            train_only=("2.",),
        ),
    ]
    # each model's seed from its name: adding or removing a model changes no other's numbers
    return [Model(**{**m.__dict__, "seed": zlib.crc32(m.name.encode()) % 10007}) for m in ms]


# --- export, artifacts, data ----------------------------------------------------


def build(m: Model) -> tuple[nn.Module, dict[str, np.ndarray]]:
    torch.manual_seed(m.seed)
    net = m.build()
    params = {k: v.detach().numpy().astype(np.float32).copy() for k, v in net.named_parameters()}
    return net, params


def make_data(m: Model, net: nn.Module) -> dict[str, np.ndarray]:
    """STEPS*ACCUM mini-batches: inputs standard normal (token ids uniform);
    labels the argmax of a fixed random linear teacher of the inputs, float
    targets the teacher's outputs (BCE: their signs as 0/1)."""
    rng = np.random.default_rng(1000 + m.seed)
    n = STEPS * ACCUM
    if m.vocab:
        x = rng.integers(0, m.vocab, (n, *m.input_shape)).astype(np.int64)
        feats = np.eye(m.vocab, dtype=np.float32)[x].reshape(n, m.input_shape[0], -1)
    else:
        x = rng.standard_normal((n, *m.input_shape)).astype(np.float32)
        feats = x.reshape(n, m.input_shape[0], -1)
    if m.loss in ("mse", "l1", "bce"):
        with torch.no_grad():
            out_shape = tuple(net(torch.from_numpy(x[0])).shape)
        width = int(np.prod(out_shape[1:]))
        teacher = rng.standard_normal((feats.shape[-1], width)).astype(np.float32)
        t = (feats @ teacher / np.sqrt(feats.shape[-1])).reshape(n, *out_shape).astype(np.float32)
        if m.loss == "bce":
            t = (t > 0).astype(np.float32)
        return {"input": x, "target": t}
    per = m.label_tokens or 1
    if m.label_tokens:  # one label per token: a teacher of each token's one-hot / features
        tok = np.eye(m.vocab, dtype=np.float32)[x] if m.vocab else x
        teacher = rng.standard_normal((tok.shape[-1], m.classes)).astype(np.float32)
        labels = np.argmax(tok @ teacher, axis=-1)
    else:
        teacher = rng.standard_normal((feats.shape[-1], m.classes)).astype(np.float32)
        labels = np.argmax(feats @ teacher, axis=-1)
    labels = labels.astype(np.int64).reshape(
        n, m.input_shape[0], *([per] if m.label_tokens else [])
    )
    if m.ignore or m.loss == "ce_ignore":
        # every third label ignored, never a whole mini-batch
        flat = labels.reshape(n, -1)
        flat[:, 1::3] = IGNORE
    return {"input": x, "labels": labels}


def export(m: Model, net: nn.Module, data: dict[str, np.ndarray]) -> onnx.ModelProto:
    buf = io.BytesIO()
    args: tuple[torch.Tensor, ...] = (torch.from_numpy(data["input"][0]),)
    names = ["input"]
    if m.loss == "inside":
        args += (torch.from_numpy(data["labels"][0]),)
        names.append("labels")
    net.train()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the TorchScript exporter's deprecation notices
        torch.onnx.export(
            net,
            args,
            buf,
            input_names=names,
            output_names=["loss" if m.loss == "inside" else "output"],
            opset_version=17,
            do_constant_folding=False,
            training=torch.onnx.TrainingMode.TRAINING,
            dynamo=False,
        )
    model = onnx.load_from_string(buf.getvalue())
    for node in model.graph.node:
        if node.op_type == "LayerNormalization" and len(node.output) == 1:
            # the generator builds LayerNormalizationGrad from the forward's
            # saved statistics, which torch's export does not name (as make_models.py)
            node.output.extend([f"{node.output[0]}_mean", f"{node.output[0]}_inv_std_dev"])
        if node.op_type == "SoftmaxCrossEntropyLoss" and len(node.output) == 1:
            # the same for the log-probabilities SoftmaxCrossEntropyLossGrad reads
            node.output.append(f"{node.output[0]}_log_prob")
    model.ir_version = 9  # this onnxruntime-training build loads IR <= 10
    onnx.checker.check_model(model)
    return model


def fix_eval_batchnorm(folder: Path) -> None:
    """eval_model.onnx: the generator turns the training BatchNormalization
    (training_mode 1, outputs Y, running mean, running variance) into
    training_mode 0 but keeps its three outputs, which onnxruntime's own
    loader refuses (Module() loads the eval model); keep Y only. (The training
    model's BatchNormInternal does not write the running statistics back:
    they are initializers of training_model.onnx, not checkpoint state.)"""
    path = folder / "eval_model.onnx"
    model = onnx.load(str(path))
    changed = False
    for node in model.graph.node:
        if node.op_type == "BatchNormalization" and len(node.output) > 1:
            del node.output[1:]
            changed = True
    if changed:
        onnx.save(model, str(path))


def loss_and_optimizer(m: Model) -> tuple[object, object]:
    from onnxruntime.training import onnxblock

    loss: object = {
        "ce": "CrossEntropyLoss",
        "mse": "MSELoss",
        "l1": "L1Loss",
        "bce": "BCEWithLogitsLoss",
        "inside": None,
    }.get(m.loss, "x")
    if m.loss == "ce_ignore":
        loss = onnxblock.loss.CrossEntropyLoss(ignore_index=IGNORE)
    elif m.loss == "ce_sum":
        loss = onnxblock.loss.CrossEntropyLoss(reduction="sum")
    optim: object = {"sgd": "SGD", "adamw": "AdamW"}.get(m.optim)
    if m.optim == "adamw_wd":
        optim = onnxblock.optim.AdamW(weight_decay=0.01)
    return loss, optim


def torch_loss(m: Model, out: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    if m.loss == "inside":
        return out
    if m.loss == "mse":
        return F.mse_loss(out, y)
    if m.loss == "l1":
        return F.l1_loss(out, y)
    if m.loss == "bce":
        return F.binary_cross_entropy_with_logits(out, y)
    if m.loss == "ce_sum":
        return F.cross_entropy(out, y, reduction="sum")
    return F.cross_entropy(out, y, ignore_index=IGNORE)


def torch_train(
    m: Model, net: nn.Module, params: dict[str, np.ndarray], data: dict[str, np.ndarray]
) -> tuple[list[float], dict[str, np.ndarray]]:
    """The same training in torch float32: summed gradients, then p -= lr g
    (SGD) or AdamW as onnxruntime-training's optimizer_model.onnx does it."""
    torch.set_num_threads(1)
    with torch.no_grad():
        for k, p in net.named_parameters():
            p.copy_(torch.from_numpy(params[k]))
    net.train()
    trained = [p for k, p in net.named_parameters() if m.trainable(k)]
    moments = [(torch.zeros_like(p), torch.zeros_like(p)) for p in trained]
    wd = 0.01 if m.optim == "adamw_wd" else 0.0
    count = [0]

    def adamw() -> None:
        """onnxruntime's AdamWOptimizer, adam_mode 1 (Hugging Face's AdamW: the
        bias correction folded into the learning rate, the decay after the
        update); torch.optim.AdamW is its mode 0."""
        count[0] += 1
        b1, b2 = ADAMW_BETAS
        lr_c = m.lr * (1 - b2 ** count[0]) ** 0.5 / (1 - b1 ** count[0])
        for p, (m1, m2) in zip(trained, moments, strict=True):
            m1.mul_(b1).add_((1 - b1) * p.grad)
            m2.mul_(b2).add_((1 - b2) * p.grad * p.grad)
            p -= lr_c * m1 / (m2.sqrt() + ADAMW_EPS)
            p -= m.lr * wd * p

    def batch_loss(i: int) -> float:
        x = torch.from_numpy(data["input"][i].copy())
        y = torch.from_numpy(data[m.targets][i].copy())
        loss = torch_loss(m, net(x, y) if m.loss == "inside" else net(x), y)
        loss.backward()
        return float(loss.detach())

    def step() -> None:
        with torch.no_grad():
            if m.optim != "sgd":
                adamw()
            else:
                for p in trained:
                    p -= m.lr * p.grad
            for p in net.parameters():
                p.grad = None

    losses = ort.sgd_steps(STEPS, ACCUM, batch_loss, step)
    return losses, {k: v.detach().numpy().copy() for k, v in net.named_parameters()}


def write_model(m: Model, folder: Path) -> dict:
    net, params = build(m)
    data = make_data(m, net)
    model = export(m, net, data)
    loss, optim = loss_and_optimizer(m)
    ort.generate(
        model,
        folder,
        requires_grad=[k for k in params if m.trainable(k)],
        frozen_params=[k for k in params if not m.trainable(k)],
        loss=loss,
        optimizer=optim,
    )
    fix_eval_batchnorm(folder)
    names = [n for n, _ in ort.user_inputs(folder, params)]
    if names != ["input", m.targets]:
        raise SystemExit(f"{m.name}: training_model.onnx user inputs {names}")
    np.savez(folder / "data.npz", **data)
    np.savez(folder / "params.npz", **params)
    losses, _, final = ort.ort_train(
        folder, params, data, m.targets, steps=STEPS, accum=ACCUM, lr=m.lr, label=m.name
    )
    ref: dict = {
        "oracle": ort.ORACLE,
        "what": m.what,
        "lr": m.lr,
        "steps": STEPS,
        "accum": ACCUM,
        "input_shape": list(m.input_shape),
        "loss": m.loss,
        "optimizer": m.optim,
        "losses": losses,
    }
    if m.xcheck:
        t_losses, t_final = torch_train(m, net, params, data)
        diff = ort.max_abs_diff(losses, final, t_losses, t_final)
        tol = XCHECK_TOL if m.xcheck == "strict" else LOOSE_TOL
        if not ort.close(losses, final, t_losses, t_final, tol):
            raise SystemExit(f"{m.name}: onnxruntime-training and torch disagree: {diff:.3g}")
        ref["torch_max_abs_diff"] = diff
    frozen = [k for k in params if not m.trainable(k)]
    if frozen:
        ref["frozen"] = frozen
    ref["params"] = {k: v.tolist() for k, v in final.items()}
    (folder / "reference.json").write_text(ort.dump_json(ref) + "\n")
    return ref


# --- coverage -------------------------------------------------------------------


def ops_of(path: Path) -> list[str]:
    """The distinct (domain:)op types of an ONNX file, sorted; the default
    domain unprefixed, com.microsoft as ms:."""
    if not path.exists():
        return []
    g = onnx.load(str(path), load_external_data=False).graph
    short = {"": "", "ai.onnx": "", "com.microsoft": "ms:"}
    return sorted({f"{short.get(n.domain, n.domain + ':')}{n.op_type}" for n in g.node})


def lower_status(folder: Path) -> str:
    """`deeploy-mlir lower` of the folder: "ok" or its error's first line
    (the output directory's path left out)."""
    with tempfile.TemporaryDirectory() as tmp:
        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "deeploy_mlir.cli",
                "lower",
                str(folder),
                "-o",
                f"{tmp}/p",
                "-q",
            ],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(HERE.parent)},
            timeout=600,
        )
    if r.returncode == 0:
        return "ok"
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    line = lines[0] if lines else f"exit {r.returncode}"
    return line.replace(f"{folder.parent}{os.sep}", "").replace("deeploy-mlir: error: ", "")


def run_status(folder: Path, m: Model) -> str:
    """`deeploy-mlir run` of the folder on its data (STEPS x ACCUM, the
    model's lr) on the host emulation, against reference.json: "matches
    (max |diff| D)" when losses and parameters agree within rtol 1e-4, atol
    1e-5, else what differs or the error's first line."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "deeploy_mlir.cli", "run", str(folder), "-q"]
        cmd += ["--data", str(folder / "data.npz"), "--steps", str(STEPS)]
        cmd += ["--accum", str(ACCUM), "--lr", str(m.lr), "--json", f"{tmp}/out.json"]
        env = {**os.environ, "PYTHONPATH": str(HERE.parent)}
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
        if r.returncode != 0:
            lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
            line = lines[0] if lines else f"exit {r.returncode}"
            return line.replace(f"{folder.parent}{os.sep}", "").replace("deeploy-mlir: error: ", "")
        got = json.loads(Path(f"{tmp}/out.json").read_text())
    ref = json.loads((folder / "reference.json").read_text())
    params = {k: np.asarray(v, np.float32) for k, v in ref["params"].items()}
    mine = {k: np.asarray(got["params"][k], np.float32) for k in params}
    diff = ort.max_abs_diff(got["losses"], mine, ref["losses"], params)
    ok = ort.close(got["losses"], mine, ref["losses"], params, XCHECK_TOL)
    return f"{'matches' if ok else 'DIFFERS'} (max \\|diff\\| {diff:.1e})"


def refused_ops(status: str) -> set[str]:
    """The ops an "unsupported ONNX ops: A (nodes: ..); com.microsoft:B (nodes: ..)"
    error names, spelled like ops_of."""
    if "unsupported ONNX ops: " not in status:
        return set()
    # one list per file that holds such ops ("PATH: unsupported ONNX ops: ..; PATH: ..")
    lists = status.split("unsupported ONNX ops: ")[1:]
    parts = (part for listed in lists for part in listed.split("); "))
    names = (part.split(" (nodes", 1)[0].strip() for part in parts)
    return {n.replace("com.microsoft:", "ms:") for n in names if n and not n.endswith(":")}


def coverage(out: Path, models: Sequence[Model], jobs: int = 2, run: bool = False) -> str:
    """The Markdown table; `run`: a column of run_status for the models that lower."""
    from concurrent.futures import ThreadPoolExecutor

    exported = [m for m in models if (out / m.name / "training_model.onnx").exists()]
    with ThreadPoolExecutor(jobs) as pool:
        status = dict(
            zip(
                [m.name for m in exported],
                pool.map(lambda m: lower_status(out / m.name), exported),
                strict=True,
            )
        )
        lowered = [m for m in exported if status[m.name] == "ok"] if run else []
        trained = dict(
            zip(
                [m.name for m in lowered],
                pool.map(lambda m: run_status(out / m.name, m), lowered),
                strict=True,
            )
        )
    head = "| model | what | training_model.onnx ops | optimizer_model.onnx ops "
    head += "| `deeploy-mlir lower` |"
    rows = [
        head + (" `deeploy-mlir run` vs reference |" if run else ""),
        "|---" * (6 if run else 5) + "|",
    ]
    need: dict[str, list[str]] = {}
    refused: set[str] = set()
    for m in models:
        folder = out / m.name
        tr = ops_of(folder / "training_model.onnx")
        op = ops_of(folder / "optimizer_model.onnx")
        st = status.get(m.name, "not exported")
        refused |= refused_ops(st)
        for o in {*tr, *op}:
            need.setdefault(o, []).append(m.name)
        cells = [m.name, m.what, ", ".join(tr), ", ".join(op), st.replace("|", "\\|")]
        if run:
            cells.append(trained.get(m.name, ""))
        rows.append("| " + " | ".join(cells) + " |")
    ok = sum(s == "ok" for s in status.values())
    rows += ["", f"{ok} of {len(models)} models lower today."]
    if run:
        same = sum(v.startswith("matches") for v in trained.values())
        rows.append(f"{same} of them train like onnxruntime-training (rtol 1e-4, atol 1e-5).")
    rows.append("")
    rows += ["| op | models using it | refused by `lower` today |", "|---|---|---|"]
    for o, names in sorted(need.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        rows.append(f"| {o} | {len(names)} | {'refused' if o in refused else ''} |")
    return "\n".join(rows) + "\n"


# --- main -------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("out", type=Path, help="output directory (one folder per model)")
    ap.add_argument("--only", default=None, help="only these models (comma-separated names)")
    ap.add_argument("--list", action="store_true", help="list the models and exit")
    ap.add_argument("--coverage", action="store_true", help="print the Markdown coverage table")
    ap.add_argument("--no-export", action="store_true", help="use the artifacts already in OUT")
    ap.add_argument(
        "--run",
        action="store_true",
        help="with --coverage: also train each model that lowers (deeploy-mlir run, host) "
        "and compare with reference.json",
    )
    ap.add_argument("-j", type=int, default=2, help="parallel deeploy-mlir runs (default 2)")
    args = ap.parse_args(argv)
    models = zoo()
    if args.only:
        want = args.only.split(",")
        unknown = sorted(set(want) - {m.name for m in models})
        if unknown:
            ap.error(f"--only: no zoo model {', '.join(unknown)}")
        models = [m for m in models if m.name in want]
    if args.list:
        for m in models:
            print(f"{m.name:20s} {m.what}")
        return 0
    if not args.no_export:
        for m in models:
            t0 = time.perf_counter()
            ref = write_model(m, args.out / m.name)
            xc = ref.get("torch_max_abs_diff")
            print(
                f"{m.name}: losses {ref['losses'][0]:.4f} -> {ref['losses'][-1]:.4f}"
                + (f", torch max |diff| {xc:.2e}" if xc is not None else ", no torch check")
                + f" ({time.perf_counter() - t0:.1f} s)",
                file=sys.stderr,
            )
    if args.coverage:
        sys.stdout.write(coverage(args.out, models, jobs=args.j, run=args.run))
    return 0


if __name__ == "__main__":
    sys.exit(main())
