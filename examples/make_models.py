"""Write the training models of issue 8 as onnxruntime-training artifacts,
with the numbers onnxruntime-training's own training API computes for them.

Models (torch definitions below, exported with torch.onnx at opset 17):

* simple_mlp -- Flatten, Linear, ReLU, Linear;
* ds_cnn -- DS-CNN (keyword spotting, as in MLPerf Tiny): a strided
  convolution, then depthwise-separable blocks (depthwise 3x3 + pointwise
  1x1, each followed by ReLU), global average pooling, Linear;
* resnet8 -- ResNet-8 (MLPerf Tiny image classification): a 3x3 stem, three
  stacks of two 3x3 convolutions with a residual connection (the 2nd and 3rd
  stride 2, with a 1x1 strided shortcut), global average pooling, Linear;
* mobilenet_v1 -- MobileNetV1 (MLPerf Tiny visual wake words, width 0.25):
  a strided 3x3 stem and depthwise-separable blocks, global average pooling,
  Linear;
* autoencoder -- the MLPerf Tiny anomaly-detection autoencoder: Linear +
  ReLU stacks down to a bottleneck and back, trained with the mean-squared
  error against its input (onnxruntime-training spells that loss and its
  gradient as Sub, Pow, ReduceMean, Size, Div, com.microsoft Scale, Expand,
  Mul; the constant parts fold at import);
* cct -- the Compact Convolutional Transformer (Hassani et al. 2021): a
  convolutional tokenizer, pre-norm transformer blocks (multi-head
  self-attention, GELU MLP), sequence pooling, Linear;
* cct_lora -- the same CCT with LoRA adapters on the q and v projections;
  only the adapters and the classifier train, every other parameter is
  frozen (``frozen_params``: no gradient, no update).

Each comes in two sizes:

* small (examples/<name>/, committed, used by tests/test_models_conv.py):
  a few channels on small images, batch 2, so that training them on the host
  emulation takes seconds;
* published (``--published``, written to examples/published/<name>/, which git
  ignores): DS-CNN on the 49x10 KWS input with 64 channels and 4 blocks,
  ResNet-8 on 32x32x3 CIFAR-10 with 16/32/64 channels, MobileNetV1 0.25 on
  96x96x3 with its 13 blocks, the autoencoder on 640 features (4 x 128
  hidden, bottleneck 8), CCT-2/3x2 on 32x32x3 (2 conv layers, 2 blocks, 2
  heads, dim 128, MLP ratio 1; LoRA rank 4); batch 1 (the figures are for reports:
  `deeploy-mlir report`).

BatchNormalization is folded: the networks are written without it, each
convolution carrying a bias instead (at inference, BN after a convolution is
an affine map per channel, which a bias and a rescaled weight express
exactly). What is trained is therefore the BN-free network -- the same
layers and shapes, without batch statistics. The alternative, training with
BN, makes onnxruntime-training write com.microsoft BatchNormInternal and
BatchNormalizationGrad (batch mean, inverse standard deviation, running
statistics as extra state), which the training dialect does not have yet.
docs/models.md says the same.

Every folder holds training_model.onnx, eval_model.onnx, optimizer_model.onnx
and checkpoint (``generate_artifacts``: CrossEntropyLoss -- MSELoss for the
autoencoder --, SGD, every parameter trainable but cct_lora's frozen ones;
torch's LayerNormalization gets its Mean and InvStdDev outputs named first, which
the generator needs to build LayerNormalizationGrad), params.npz (the initial
parameters), data.npz (``input`` [STEPS*ACCUM, batch, C, H, W] float32 and
``labels`` [STEPS*ACCUM, batch] int64 from a fixed random linear teacher;
the autoencoder's ``input`` [STEPS*ACCUM, batch, features] and ``target``,
equal to it), and -- for the small size --
reference.json: ``losses`` (per mini-batch) and ``params`` after STEPS
optimizer steps (the initial ones are params.npz, checked equal to the
checkpoint's), computed by onnxruntime-training's training
API (Module / Optimizer, single-threaded), plus ``lr``, ``steps``, ``accum``,
``batch``, ``input_shape``, ``classes``, ``loss``, ``batchnorm``,
``torch_max_abs_diff`` and, for cct_lora, ``frozen`` (the names of the frozen
parameters, which keep their params.npz values). (reference.json, not expected.json: the test suites
that run every examples/*/expected.json are written for the MLPs; these
models have their own, tests/test_models_conv.py.)

Every run is cross-checked against the same training in torch (float32
autograd, mean cross-entropy or squared error, gradients summed over the ACCUM mini-batches,
p -= lr * g for the trainable p): the script fails unless losses and parameters agree within
rtol 1e-4, atol 1e-5 -- looser than make_examples.py's 1e-5/1e-6 because
convolutions sum many more products per output, in another order in torch's
and onnxruntime's kernels.

    python examples/make_models.py                 # the small models
    python examples/make_models.py --published     # also the published sizes
    python examples/make_models.py --only resnet8  # one model
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

import numpy as np
import onnx
import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import ort_reference as ort  # noqa: E402  (artifacts, onnxruntime-training loop, JSON layout)

STEPS, ACCUM, LR = 3, 2, 0.05
PUBLISHED_DIR = HERE / "published"
XCHECK_TOL = {"rtol": 1e-4, "atol": 1e-5}


# --- torch definitions --------------------------------------------------------


def conv(
    cin: int,
    cout: int,
    k: int | tuple[int, int],
    stride: int = 1,
    pad: int | tuple[int, int] = 0,
    groups: int = 1,
) -> torch.nn.Conv2d:
    """A convolution with bias (BatchNormalization folded into it)."""
    return torch.nn.Conv2d(cin, cout, k, stride=stride, padding=pad, groups=groups, bias=True)


def make_simple_mlp(in_shape: Sequence[int], hidden: int, classes: int) -> torch.nn.Module:
    n = int(np.prod(in_shape))
    return torch.nn.Sequential(
        torch.nn.Flatten(1),
        torch.nn.Linear(n, hidden),
        torch.nn.ReLU(),
        torch.nn.Linear(hidden, classes),
    )


def make_ds_cnn(
    cin: int,
    channels: int,
    blocks: int,
    classes: int,
    kernel: tuple[int, int],
    stride: int,
    pad: tuple[int, int],
) -> torch.nn.Module:
    layers: list[torch.nn.Module] = [conv(cin, channels, kernel, stride, pad), torch.nn.ReLU()]
    for _ in range(blocks):
        layers += [
            conv(channels, channels, 3, 1, 1, groups=channels),
            torch.nn.ReLU(),
            conv(channels, channels, 1),
            torch.nn.ReLU(),
        ]
    layers += [
        torch.nn.AdaptiveAvgPool2d(1),
        torch.nn.Flatten(1),
        torch.nn.Linear(channels, classes),
    ]
    return torch.nn.Sequential(*layers)


def make_resnet8(cin: int, widths: tuple[int, int, int], classes: int) -> torch.nn.Module:

    class Block(torch.nn.Module):
        def __init__(self, a: int, b: int, stride: int) -> None:
            super().__init__()
            self.conv1 = conv(a, b, 3, stride, 1)
            self.conv2 = conv(b, b, 3, 1, 1)
            self.shortcut = conv(a, b, 1, stride) if stride != 1 or a != b else None

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            y = self.conv2(torch.relu(self.conv1(x)))
            s = x if self.shortcut is None else self.shortcut(x)
            return torch.relu(y + s)

    class ResNet8(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.stem = conv(cin, widths[0], 3, 1, 1)
            self.stack1 = Block(widths[0], widths[0], 1)
            self.stack2 = Block(widths[0], widths[1], 2)
            self.stack3 = Block(widths[1], widths[2], 2)
            self.fc = torch.nn.Linear(widths[2], classes)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            y = torch.relu(self.stem(x))
            y = self.stack3(self.stack2(self.stack1(y)))
            y = torch.nn.functional.adaptive_avg_pool2d(y, 1)
            return self.fc(torch.flatten(y, 1))

    return ResNet8()


def make_autoencoder(features: int, hidden: int, layers: int, bottleneck: int) -> torch.nn.Module:
    """Dense -> ReLU stacks down to the bottleneck and back up (the MLPerf Tiny
    anomaly-detection autoencoder, BatchNormalization folded)."""
    widths = [features, *([hidden] * layers), bottleneck, *([hidden] * layers), features]
    mods: list[torch.nn.Module] = []
    for i, (a, b) in enumerate(pairwise(widths)):
        mods.append(torch.nn.Linear(a, b))
        if i < len(widths) - 2:
            mods.append(torch.nn.ReLU())
    return torch.nn.Sequential(*mods)


def make_mobilenet_v1(
    cin: int, stem: int, blocks: Sequence[tuple[int, int]], classes: int
) -> torch.nn.Module:
    """blocks: (output channels, stride) of each depthwise-separable block."""
    layers: list[torch.nn.Module] = [conv(cin, stem, 3, 2, 1), torch.nn.ReLU()]
    c = stem
    for cout, stride in blocks:
        layers += [
            conv(c, c, 3, stride, 1, groups=c),
            torch.nn.ReLU(),
            conv(c, cout, 1),
            torch.nn.ReLU(),
        ]
        c = cout
    layers += [torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(1), torch.nn.Linear(c, classes)]
    return torch.nn.Sequential(*layers)


class _Lora(torch.nn.Module):
    """y = x W^T + b + (alpha / r) (x A^T) B^T, W and b frozen (LoRA, Hu et al.
    2021). B starts at small random values instead of LoRA's zeros, so that
    both adapters get a gradient from the first step (a test that trains 3
    steps sees A move)."""

    def __init__(self, d_in: int, d_out: int, rank: int, bias: bool) -> None:
        super().__init__()
        self.base = torch.nn.Linear(d_in, d_out, bias=bias)
        self.lora_a = torch.nn.Parameter(torch.randn(rank, d_in) / d_in**0.5)
        self.lora_b = torch.nn.Parameter(torch.randn(d_out, rank) * 0.1)
        self.scale = 2.0 / rank  # LoRA's alpha / r with alpha = 2

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.base(x) + (x @ self.lora_a.t()) @ self.lora_b.t() * self.scale


def make_cct(
    cin: int,
    image: int,
    convs: int,
    dim: int,
    heads: int,
    blocks: int,
    mlp_ratio: int,
    classes: int,
    lora_rank: int = 0,
) -> torch.nn.Module:
    """The Compact Convolutional Transformer (Hassani et al. 2021): a
    convolutional tokenizer (convs x [Conv 3x3 without bias, ReLU, MaxPool
    3x3/2 pad 1]), a learnable positional embedding, pre-norm transformer
    encoder blocks (multi-head self-attention with separate q/k/v projections
    without bias and an output projection, MLP with GELU), a final LayerNorm,
    sequence pooling (a Linear scores each token, softmax over the tokens, the
    weighted sum of the tokens) and a Linear classifier. lora_rank > 0 adds
    LoRA adapters to the q and v projections (make the base weights frozen
    with `frozen`)."""

    def proj(bias: bool, lora: bool) -> torch.nn.Module:
        if lora and lora_rank:
            return _Lora(dim, dim, lora_rank, bias)
        return torch.nn.Linear(dim, dim, bias=bias)

    class Attention(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.q, self.k, self.v = proj(False, True), proj(False, False), proj(False, True)
            self.proj = torch.nn.Linear(dim, dim)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            b, n, _ = x.shape
            hd = dim // heads

            def split(t: torch.Tensor) -> torch.Tensor:
                return t.reshape(b, n, heads, hd).transpose(1, 2)

            q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
            a = torch.softmax((q @ k.transpose(-2, -1)) * hd**-0.5, dim=-1)
            return self.proj((a @ v).transpose(1, 2).reshape(b, n, dim))

    class Block(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.norm1 = torch.nn.LayerNorm(dim)
            self.attn = Attention()
            self.norm2 = torch.nn.LayerNorm(dim)
            self.fc1 = torch.nn.Linear(dim, dim * mlp_ratio)
            self.fc2 = torch.nn.Linear(dim * mlp_ratio, dim)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            x = x + self.attn(self.norm1(x))
            return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.norm2(x))))

    class CCT(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            chans = [cin, *([dim // 2] * (convs - 1)), dim]
            layers: list[torch.nn.Module] = []
            for a, b in pairwise(chans):
                layers += [
                    torch.nn.Conv2d(a, b, 3, padding=1, bias=False),
                    torch.nn.ReLU(),
                    torch.nn.MaxPool2d(3, 2, 1),
                ]
            self.tokenizer = torch.nn.Sequential(*layers)
            tokens = (image // 2**convs) ** 2
            self.pos = torch.nn.Parameter(torch.randn(1, tokens, dim) * 0.2)
            self.blocks = torch.nn.Sequential(*(Block() for _ in range(blocks)))
            self.norm = torch.nn.LayerNorm(dim)
            self.pool = torch.nn.Linear(dim, 1)
            self.fc = torch.nn.Linear(dim, classes)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            x = self.tokenizer(x).flatten(2).transpose(1, 2) + self.pos
            x = self.norm(self.blocks(x))
            w = torch.softmax(self.pool(x), dim=1).transpose(1, 2)
            return self.fc((w @ x).flatten(1))

    return CCT()


#: MobileNetV1's 13 blocks at width 1.0: (output channels, stride)
MOBILENET_V1_BLOCKS = (
    (64, 1),
    (128, 2),
    (128, 1),
    (256, 2),
    (256, 1),
    (512, 2),
    *((512, 1),) * 5,
    (1024, 2),
    (1024, 1),
)


@dataclass(frozen=True)
class Spec:
    name: str
    build: Callable[[], torch.nn.Module]
    input_shape: tuple[int, ...]  # [batch, C, H, W], or [batch, features]
    #: classes of the cross-entropy loss; 0: mean-squared error against the input
    classes: int
    seed: int
    #: when not empty, only the parameters whose name contains one of these
    #: train; the others are frozen (generate_artifacts' frozen_params)
    train_only: tuple[str, ...] = ()

    @property
    def batchnorm(self) -> str:
        """reference.json's note on BatchNormalization."""
        if self.name.startswith("cct"):
            return "none (the CCT normalizes with LayerNormalization)"
        return "folded (convolutions and dense layers with bias, no BatchNormalization)"

    def trainable(self, param: str) -> bool:
        return not self.train_only or any(t in param for t in self.train_only)

    @property
    def mse(self) -> bool:
        return self.classes == 0

    @property
    def targets(self) -> str:
        """The training graph's second user input."""
        return "target" if self.mse else "labels"


#: what trains in cct_lora: the LoRA adapters and the classifier
LORA_TRAINS = ("lora_", "fc.")


def small_models() -> list[Spec]:
    return [
        Spec("simple_mlp", lambda: make_simple_mlp((1, 6, 6), 16, 5), (2, 1, 6, 6), 5, 11),
        Spec(
            "ds_cnn",
            lambda: make_ds_cnn(1, 8, 2, 4, (4, 2), 2, (1, 1)),
            (2, 1, 14, 6),
            4,
            12,
        ),
        Spec("resnet8", lambda: make_resnet8(3, (4, 8, 8), 4), (2, 3, 8, 8), 4, 13),
        Spec(
            "mobilenet_v1",
            lambda: make_mobilenet_v1(3, 4, ((8, 1), (16, 2), (16, 1)), 2),
            (2, 3, 12, 12),
            2,
            14,
        ),
        Spec("autoencoder", lambda: make_autoencoder(32, 16, 2, 4), (3, 32), 0, 15),
        Spec("cct", lambda: make_cct(3, 8, 1, 16, 2, 1, 2, 4), (2, 3, 8, 8), 4, 16),
        Spec(
            "cct_lora",
            lambda: make_cct(3, 8, 1, 16, 2, 1, 2, 4, lora_rank=2),
            (2, 3, 8, 8),
            4,
            17,
            LORA_TRAINS,
        ),
    ]


def published_models() -> list[Spec]:
    quarter = tuple((c // 4, s) for c, s in MOBILENET_V1_BLOCKS)
    return [
        Spec("simple_mlp", lambda: make_simple_mlp((1, 28, 28), 128, 10), (1, 1, 28, 28), 10, 21),
        Spec(
            "ds_cnn",
            lambda: make_ds_cnn(1, 64, 4, 12, (10, 4), 2, (5, 1)),
            (1, 1, 49, 10),
            12,
            22,
        ),
        Spec("resnet8", lambda: make_resnet8(3, (16, 32, 64), 10), (1, 3, 32, 32), 10, 23),
        Spec(
            "mobilenet_v1",
            lambda: make_mobilenet_v1(3, 8, quarter, 2),
            (1, 3, 96, 96),
            2,
            24,
        ),
        Spec("autoencoder", lambda: make_autoencoder(640, 128, 4, 8), (1, 640), 0, 25),
        # CCT-2/3x2: 2 convolutional layers of 3x3, 2 blocks, 2 heads, dim 128, MLP ratio 1
        Spec("cct", lambda: make_cct(3, 32, 2, 128, 2, 2, 1, 10), (1, 3, 32, 32), 10, 26),
        Spec(
            "cct_lora",
            lambda: make_cct(3, 32, 2, 128, 2, 2, 1, 10, lora_rank=4),
            (1, 3, 32, 32),
            10,
            27,
            LORA_TRAINS,
        ),
    ]


# --- export, artifacts, data ---------------------------------------------------


def build(spec: Spec) -> tuple[torch.nn.Module, dict[str, np.ndarray]]:
    torch.manual_seed(spec.seed)
    net = spec.build()
    params = {k: v.detach().numpy().astype(np.float32).copy() for k, v in net.named_parameters()}
    return net, params


def export(spec: Spec, net: torch.nn.Module) -> onnx.ModelProto:
    import io

    buf = io.BytesIO()
    x = torch.zeros(spec.input_shape)
    torch.onnx.export(
        net,
        (x,),
        buf,
        input_names=["input"],
        output_names=["output"],
        opset_version=17,
        do_constant_folding=False,
        training=torch.onnx.TrainingMode.TRAINING,
        dynamo=False,
    )
    model = onnx.load_from_string(buf.getvalue())
    for node in model.graph.node:
        if node.op_type == "LayerNormalization" and len(node.output) == 1:
            # the generator builds LayerNormalizationGrad from the forward's
            # saved statistics, which torch's export does not name
            node.output.extend([f"{node.output[0]}_mean", f"{node.output[0]}_inv_std_dev"])
    model.ir_version = 9  # this onnxruntime-training build loads IR <= 10
    onnx.checker.check_model(model)
    return model


def generate(spec: Spec, net: torch.nn.Module, params: dict[str, np.ndarray], folder: Path) -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the TorchScript exporter's deprecation notice
        model = export(spec, net)
    ort.generate(
        model,
        folder,
        requires_grad=[k for k in params if spec.trainable(k)],
        frozen_params=[k for k in params if not spec.trainable(k)],
        mse=spec.mse,
    )


def make_data(spec: Spec) -> dict[str, np.ndarray]:
    """STEPS*ACCUM mini-batches; labels = argmax of a fixed random linear
    teacher; an autoencoder's target is its input."""
    rng = np.random.default_rng(1000 + spec.seed)
    n = STEPS * ACCUM
    x = rng.standard_normal((n, *spec.input_shape)).astype(np.float32)
    if spec.mse:
        return {"input": x, "target": x.copy()}
    feats = int(np.prod(spec.input_shape[1:]))
    teacher = rng.standard_normal((feats, spec.classes)).astype(np.float32)
    labels = np.argmax(x.reshape(n, spec.input_shape[0], feats) @ teacher, axis=-1)
    return {"input": x, "labels": labels.astype(np.int64)}


def torch_train(
    spec: Spec, net: torch.nn.Module, params: dict[str, np.ndarray], data: dict[str, np.ndarray]
) -> tuple[list[float], dict[str, np.ndarray]]:
    """The same training in torch float32: summed gradients, p -= lr * g."""
    torch.set_num_threads(1)
    with torch.no_grad():
        for k, p in net.named_parameters():
            p.copy_(torch.from_numpy(params[k]))

    def batch_loss(i: int) -> float:
        out = net(torch.from_numpy(data["input"][i].copy()))
        target = torch.from_numpy(data[spec.targets][i].copy())
        if spec.mse:
            loss = torch.nn.functional.mse_loss(out, target)
        else:
            loss = torch.nn.functional.cross_entropy(out, target)
        loss.backward()
        return float(loss.detach())

    def step() -> None:
        with torch.no_grad():
            for k, p in net.named_parameters():
                if spec.trainable(k):
                    p -= LR * p.grad
                p.grad = None

    losses = ort.sgd_steps(STEPS, ACCUM, batch_loss, step)
    return losses, {k: v.detach().numpy().copy() for k, v in net.named_parameters()}


def write_model(spec: Spec, folder: Path, reference: bool) -> dict | None:
    net, params = build(spec)
    generate(spec, net, params, folder)
    names = [n for n, _ in ort.user_inputs(folder, params)]
    if names != ["input", spec.targets]:
        raise SystemExit(f"{spec.name}: training_model.onnx user inputs {names}")
    data = make_data(spec)
    np.savez(folder / "data.npz", **data)
    np.savez(folder / "params.npz", **params)
    if not reference:
        return None
    losses, _, final = ort.ort_train(
        folder, params, data, spec.targets, steps=STEPS, accum=ACCUM, lr=LR, label=spec.name
    )
    t_losses, t_final = torch_train(spec, net, params, data)
    diff = ort.max_abs_diff(losses, final, t_losses, t_final)
    if not ort.close(losses, final, t_losses, t_final, XCHECK_TOL):
        raise SystemExit(f"{spec.name}: onnxruntime-training and torch disagree: {diff:.3g}")
    ref = {
        "oracle": ort.ORACLE,
        "lr": LR,
        "steps": STEPS,
        "accum": ACCUM,
        "batch": spec.input_shape[0],
        "input_shape": list(spec.input_shape),
        "classes": spec.classes,
        "loss": "mse" if spec.mse else "cross-entropy",
        "batchnorm": spec.batchnorm,
        "losses": losses,
        "torch_max_abs_diff": diff,
        "params": {k: v.tolist() for k, v in final.items()},
    }
    frozen = [k for k in params if not spec.trainable(k)]
    if frozen:
        ref["frozen"] = frozen
    (folder / "reference.json").write_text(ort.dump_json(ref) + "\n")
    return ref


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--published", action="store_true", help="also write the published sizes")
    ap.add_argument("--only", default=None, help="write only this model")
    args = ap.parse_args(argv)
    for spec in small_models():
        if args.only in (None, spec.name):
            ref = write_model(spec, HERE / spec.name, reference=True)
            assert ref is not None
            print(
                f"{spec.name}: losses {ref['losses'][0]:.4f} -> {ref['losses'][-1]:.4f}, "
                f"torch max |diff| {ref['torch_max_abs_diff']:.2e}"
            )
    if args.published:
        for spec in published_models():
            if args.only in (None, spec.name):
                write_model(spec, PUBLISHED_DIR / spec.name, reference=False)
                print(f"{spec.name} (published size) -> {PUBLISHED_DIR / spec.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
