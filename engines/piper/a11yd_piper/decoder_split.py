# SPDX-License-Identifier: GPL-3.0-or-later
"""A Piper (VITS) model cut in two before its vocoder, so that a unit's first frames can be decoded, and
heard, before the rest; and how many frames to decode first."""

import collections
import math
import re
import time

from .piper_tts import onnxruntime

# The utterance's first unit, when the model is split (DecoderSplit), is decoded in two pieces: its first
# frames, sent at once, then the rest, which must be decoded before the first piece has played; so is a
# later unit whose decoding would take longer than what was sent before it has left to play. The first
# piece: at least FIRST_PIECE_FRAMES (of which the model's lead-in, trimmed, is about LEAD_IN_FRAMES), and
# long enough that the rest takes at most its playing time when decoding takes a share of the audio's
# duration: DECODING_MARGIN times the slowest of the voice's last decodings (their time over the audio they
# made, which a loaded machine multiplies), within DECODING_SHARES (at 1, half the unit comes first: a lower
# cap left a gap on a very loaded machine).
FIRST_PIECE_FRAMES = 16
LEAD_IN_FRAMES = 4
DECODING_MARGIN = 3.0
DECODING_SHARES = (0.1, 1.0)


class DecoderSplit:
    """A Piper (VITS) model cut in two where its vocoder (the `/dec/` nodes, HiFi-GAN: convolutions and
    upsamplings, about two thirds of an inference) takes the latent frames: the front (text encoder,
    durations, flow) runs over the whole unit, so its prosody and durations are those of the whole model;
    the decoder can then run on a range of frames alone, with `context` frames of the latent on each side
    (its receptive field, read from its convolutions), which gives the same samples as the whole model
    (test_decoder_split holds it).
    So the first sound of a unit waits for the front and the decoding of its first frames only. A model
    that is not cut so (a decoder with another input, as a multi-speaker one's) raises here."""

    def __init__(self, path, options, hop_length, sample_rate):
        import onnx  # piper-tts[alignment]'s dependency; without it, the model is run whole

        model = onnx.load(str(path))
        graph = model.graph
        decoder = [node for node in graph.node if node.name.startswith("/dec/")]
        inside = {name for node in decoder for name in node.output}
        weights = {tensor.name for tensor in graph.initializer}
        entries = {name for node in decoder for name in node.input
                   if name and name not in inside and name not in weights}
        exits = {name for node in graph.node if not node.name.startswith("/dec/")
                 for name in node.input if name in inside}
        exits |= {output.name for output in graph.output if output.name in inside}
        if len(entries) != 1 or len(exits) != 1:
            raise ValueError(f"decoder with inputs {sorted(entries)} and outputs {sorted(exits)}")
        # The receptive field, in latent frames each side: every convolution's reach at its rate, but of
        # the residual blocks that run side by side after an upsampling (HiFi-GAN's resblocks.N, summed),
        # only the farthest-reaching one.
        upsampling, context, branches = 1, 0.0, {}
        for node in decoder + [None]:
            if node is None or node.op_type == "ConvTranspose":
                context += max(branches.values(), default=0.0)
                branches = {}
            if node is None:
                break
            attributes = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
            if node.op_type == "Conv":
                kernel, dilation = attributes["kernel_shape"][0], (attributes.get("dilations") or [1])[0]
                reach = (kernel - 1) * dilation / 2 / upsampling
                branch = re.match(r"/dec/(resblocks\.\d+)/", node.name)
                if branch:
                    branches[branch.group(1)] = branches.get(branch.group(1), 0.0) + reach
                else:
                    context += reach
            elif node.op_type == "ConvTranspose":
                stride = attributes["strides"][0]
                context += attributes["kernel_shape"][0] / stride / upsampling
                upsampling *= stride
        if upsampling != hop_length:
            raise ValueError(f"decoder upsamples {upsampling} times, the voice's hop is {hop_length}")
        self.hop = hop_length
        self.sample_rate = sample_rate
        self.speeds = collections.deque(maxlen=8)  # seconds per latent frame of the last decodings
        self.context = int(math.ceil(context)) + 1
        self.latent_name = entries.pop()
        audio_name = exits.pop()
        # The two graphs by hand (onnx.utils.Extractor infers every shape first: a second more at load).
        latent = onnx.helper.make_tensor_value_info(self.latent_name, onnx.TensorProto.FLOAT, None)
        rest = [node for node in graph.node if not node.name.startswith("/dec/")]
        front = self.graph(model, rest, list(graph.input), [latent] + list(graph.output[1:]))
        vocoder = self.graph(model, decoder, [latent],
                             [onnx.helper.make_tensor_value_info(audio_name, onnx.TensorProto.FLOAT, None)])
        del model
        providers = ["CPUExecutionProvider"]
        self.front = onnxruntime.InferenceSession(front, sess_options=options, providers=providers)
        self.vocoder = onnxruntime.InferenceSession(vocoder, sess_options=options, providers=providers)

    @staticmethod
    def graph(model, nodes, inputs, outputs):
        """The serialised model of the nodes of `nodes` that `outputs` need, with their weights."""
        import onnx

        producers = {name: number for number, node in enumerate(nodes) for name in node.output}
        needed, kept, stack = set(), set(), [value.name for value in outputs]
        while stack:
            name = stack.pop()
            if name in needed:
                continue
            needed.add(name)
            number = producers.get(name)
            if number is not None and number not in kept:
                kept.add(number)
                stack += [i for i in nodes[number].input if i]
        kept = [nodes[number] for number in sorted(kept)]
        weights = [tensor for tensor in model.graph.initializer if tensor.name in needed]
        names = {tensor.name for tensor in weights}
        inputs = [value for value in inputs if value.name in needed and value.name not in names]
        graph = onnx.helper.make_graph(kept, model.graph.name, inputs, outputs, weights)
        model = onnx.helper.make_model(graph, opset_imports=model.opset_import, ir_version=model.ir_version)
        return model.SerializeToString()

    def decode(self, latent, first, last, options=None):
        """Samples of frames first..<last of `latent` (1, channels, frames)."""
        frames = latent.shape[2]
        low, high = max(first - self.context, 0), min(last + self.context, frames)
        began = time.monotonic()
        audio = self.vocoder.run(None, {self.latent_name: latent[:, :, low:high]}, options)[0].reshape(-1)
        self.speeds.append((time.monotonic() - began) / max(high - low, 1))
        return audio[(first - low) * self.hop:(last - low) * self.hop]

    def share(self):
        """The share of the audio's duration its decoding is taken to need now (first_piece)."""
        slowest = max(self.speeds, default=0.0) * self.sample_rate / self.hop
        return min(max(DECODING_MARGIN * slowest, DECODING_SHARES[0]), DECODING_SHARES[1])


class Latent:
    """A unit's latent frames, decoded on demand."""

    def __init__(self, split, frames):
        self.split = split
        self.frames = frames

    def __len__(self):
        """Samples of the unit's audio."""
        return self.frames.shape[2] * self.split.hop

    def decode(self, first, last, options=None):
        return self.split.decode(self.frames, first, last, options)


def first_piece(frames, context, share, lead=0.0, lead_in=LEAD_IN_FRAMES):
    """How many of a unit's `frames` to decode first, when decoding takes `share` of the audio's duration
    and `lead` frames sent before the unit are still to play: all when the whole unit is decoded within the
    lead, or when what would be left is under half of the first piece. Otherwise the rest is decoded while
    the lead left after the first piece's decoding, then the first piece, play; when the lead cannot cover
    the first piece's own decoding (the utterance's first unit has none), while the first piece plays, less
    its `lead_in` frames when the model's lead-in is trimmed."""
    if share * (frames + context) <= lead:
        return frames
    first = max(FIRST_PIECE_FRAMES, math.ceil(share * (frames + 2 * context) - lead))
    if share * (first + context) > lead:
        first = max(FIRST_PIECE_FRAMES, math.ceil((share * (frames + context) + lead_in) / (1 + share)))
    return frames if frames - first < first // 2 else first
