"""OneTrainer #459: SDXL validation right after a latent-caching epoch feeds train-device tokens to a
text encoder 1 that the cache hook left on temp_device.

OneTrainer is not a package, so this script keeps the few pieces of its flow that decide where the
models are (names follow OneTrainer at a30953d6~1): GenericTrainer's epoch start and __validate,
the SDXL data loader's cache hooks (before_cache_image_fun / before_cache_text_fun),
StableDiffusionXLLoRASetup.setup_train_device, BaseStableDiffusionXLSetup.predict,
StableDiffusionXLModel.encode_text and clip_util.encode_clip. The models are real, tiny and built
from configs: transformers CLIPTextModel (text encoder 1, trained) and CLIPTextModelWithProjection
(text encoder 2, frozen, outputs cached), diffusers AutoencoderKL and UNet2DConditionModel (SDXL
"text_time" conditioning). The failing call is CLIPTextModel's forward (token embedding ->
index_select) on CPU weights with token ids on the train device.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from diffusers import AutoencoderKL, UNet2DConditionModel
from transformers import CLIPTextConfig, CLIPTextModel, CLIPTextModelWithProjection

TOKENS = 77
VOCAB = 1000
HIDDEN = 32  # per text encoder; encode_text concatenates both
TIME_EMBED = 8


@dataclass
class TrainConfig:
    train_device: torch.device
    temp_device: torch.device  # TrainConfig default: "cpu"
    latent_caching: bool
    train_text_encoder: bool = True  # the crash needs text encoder 1 (or an embedding) trained
    train_text_encoder_2: bool = False


@dataclass
class TinySDXLModel:
    """StableDiffusionXLModel's modules and device helpers."""

    vae: AutoencoderKL
    text_encoder_1: CLIPTextModel
    text_encoder_2: CLIPTextModelWithProjection
    unet: UNet2DConditionModel

    def vae_to(self, device: torch.device) -> None:
        self.vae.to(device=device)

    def text_encoder_1_to(self, device: torch.device) -> None:
        self.text_encoder_1.to(device=device)

    def text_encoder_2_to(self, device: torch.device) -> None:
        self.text_encoder_2.to(device=device)

    def unet_to(self, device: torch.device) -> None:
        self.unet.to(device=device)

    def to(self, device: torch.device) -> None:
        self.vae_to(device)
        self.text_encoder_1_to(device)
        self.text_encoder_2_to(device)
        self.unet_to(device)

    def eval(self) -> None:
        for module in (self.vae, self.text_encoder_1, self.text_encoder_2, self.unet):
            module.eval()


def build_model() -> TinySDXLModel:
    clip = CLIPTextConfig(hidden_size=HIDDEN, intermediate_size=37, num_hidden_layers=2, num_attention_heads=4,
                          vocab_size=VOCAB, max_position_embeddings=TOKENS, projection_dim=HIDDEN,
                          bos_token_id=0, eos_token_id=2, pad_token_id=1)
    vae = AutoencoderKL(down_block_types=("DownEncoderBlock2D",) * 2, up_block_types=("UpDecoderBlock2D",) * 2,
                        block_out_channels=(32, 64), latent_channels=4, norm_num_groups=32, sample_size=32)
    unet = UNet2DConditionModel(
        sample_size=16, layers_per_block=1, block_out_channels=(32, 64),
        down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"), up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"),
        cross_attention_dim=2 * HIDDEN, attention_head_dim=(2, 4), norm_num_groups=32, use_linear_projection=True,
        addition_embed_type="text_time", addition_time_embed_dim=TIME_EMBED,
        projection_class_embeddings_input_dim=HIDDEN + 6 * TIME_EMBED,
    )
    return TinySDXLModel(vae, CLIPTextModel(clip), CLIPTextModelWithProjection(clip), unet)


def setup_train_device(model: TinySDXLModel, config: TrainConfig) -> None:
    """StableDiffusionXLLoRASetup.setup_train_device (align_prop off)."""
    te1_on_train = config.train_text_encoder or not config.latent_caching
    te2_on_train = config.train_text_encoder_2 or not config.latent_caching
    model.text_encoder_1_to(config.train_device if te1_on_train else config.temp_device)
    model.text_encoder_2_to(config.train_device if te2_on_train else config.temp_device)
    model.vae_to(config.temp_device if config.latent_caching else config.train_device)
    model.unet_to(config.train_device)
    model.text_encoder_1.train(config.train_text_encoder)
    model.text_encoder_2.train(config.train_text_encoder_2)
    model.vae.eval()
    model.unet.train()


def encode_clip(text_encoder: CLIPTextModel | CLIPTextModelWithProjection, tokens: torch.Tensor | None,
                default_layer: int, text_encoder_output: torch.Tensor | None = None,
                add_pooled_output: bool = False, pooled_text_encoder_output: torch.Tensor | None = None,
                ) -> tuple[torch.Tensor, torch.Tensor | None]:
    """modules/model/util/clip_util.py::encode_clip (no layer skip, no mask, no extra layer norm)."""
    if text_encoder_output is None or (add_pooled_output and pooled_text_encoder_output is None):
        output = text_encoder(tokens, attention_mask=None, return_dict=True, output_hidden_states=True)
        pooled_text_encoder_output = None
        if add_pooled_output:
            pooled_text_encoder_output = getattr(output, "text_embeds", None)
        text_encoder_output = output.hidden_states[default_layer]
    return text_encoder_output, pooled_text_encoder_output


def encode_text(model: TinySDXLModel, batch: dict[str, torch.Tensor], config: TrainConfig,
                ) -> tuple[torch.Tensor, torch.Tensor]:
    """StableDiffusionXLModel.encode_text with the cached outputs BaseStableDiffusionXLSetup.predict passes."""
    te1, _ = encode_clip(model.text_encoder_1, batch["tokens_1"], default_layer=-2,
                         text_encoder_output=None if config.train_text_encoder else batch["te1_hidden"])
    cached_te2 = not config.train_text_encoder_2
    te2, pooled = encode_clip(model.text_encoder_2, batch["tokens_2"], default_layer=-2,
                              text_encoder_output=batch["te2_hidden"] if cached_te2 else None,
                              add_pooled_output=True,
                              pooled_text_encoder_output=batch["te2_pooled"] if cached_te2 else None)
    assert pooled is not None
    return torch.concat([te1, te2], dim=-1), pooled


def predict_loss(model: TinySDXLModel, batch: dict[str, torch.Tensor], config: TrainConfig) -> torch.Tensor:
    """BaseStableDiffusionXLSetup.predict + calculate_loss, reduced to one noise-prediction MSE."""
    text, pooled = encode_text(model, batch, config)
    latents = batch["latent_image"] * model.vae.config.scaling_factor
    noise = torch.randn(latents.shape, generator=torch.Generator().manual_seed(0)).to(config.train_device)
    timestep = torch.tensor([500], device=config.train_device)
    time_ids = torch.tensor([[32.0, 32.0, 0.0, 0.0, 32.0, 32.0]], device=config.train_device)
    pred = model.unet(latents + noise, timestep, encoder_hidden_states=text,
                      added_cond_kwargs={"text_embeds": pooled, "time_ids": time_ids}).sample
    return F.mse_loss(pred, noise)


class DataSet:
    """The MGDS data set: outputs on train_device; with latent caching, the DiskCache hooks run at epoch start."""

    def __init__(self, model: TinySDXLModel, config: TrainConfig) -> None:
        self.model, self.config = model, config
        self.batches: list[dict[str, torch.Tensor]] = []

    def before_cache_image_fun(self) -> None:
        self.model.to(self.config.temp_device)
        self.model.vae_to(self.config.train_device)
        self.model.eval()

    def before_cache_text_fun(self) -> None:
        self.model.to(self.config.temp_device)
        if not self.config.train_text_encoder:
            self.model.text_encoder_1_to(self.config.train_device)
        if not self.config.train_text_encoder_2:
            self.model.text_encoder_2_to(self.config.train_device)
        self.model.eval()

    def start_next_epoch(self) -> None:
        device = self.config.train_device
        image = torch.randn(1, 3, 32, 32).to(device)
        tokens = torch.randint(3, VOCAB, (1, TOKENS)).to(device)
        with torch.no_grad():
            if self.config.latent_caching:
                self.before_cache_image_fun()
            latent = self.model.vae.encode(image).latent_dist.mode()
            if self.config.latent_caching:
                self.before_cache_text_fun()
            te2 = self.model.text_encoder_2(tokens, output_hidden_states=True)
        self.batches = [{"tokens_1": tokens, "tokens_2": tokens, "latent_image": latent,
                         "te2_hidden": te2.hidden_states[-2], "te2_pooled": te2.text_embeds}]


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--variant", required=True)
    parser.add_argument("--device", choices=["cpu", "cuda"], required=True)
    parser.add_argument("--temp-device", choices=["cpu", "device"], default="cpu",
                        help="TrainConfig.temp_device: 'cpu' (the default) or the train device")
    parser.add_argument("--no-latent-cache", action="store_true", help="TrainConfig.latent_caching = False")
    parser.add_argument("--setup-train-device", action="store_true",
                        help="call setup_train_device at the start of validation (fix a30953d6)")
    return parser.parse_args(argv)


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    torch.manual_seed(0)
    import diffusers
    import transformers

    train_device = torch.device(args.device)
    config = TrainConfig(train_device=train_device,
                         temp_device=train_device if args.temp_device == "device" else torch.device("cpu"),
                         latent_caching=not args.no_latent_cache)
    print(f"variant={args.variant} torch={torch.__version__} transformers={transformers.__version__} "
          f"diffusers={diffusers.__version__} {config}")
    model = build_model()
    train_set, validation_set = DataSet(model, config), DataSet(model, config)
    trainable = [*model.text_encoder_1.parameters(), *model.unet.parameters()]
    model.vae.requires_grad_(False)
    model.text_encoder_2.requires_grad_(False)
    optimizer = torch.optim.AdamW(trainable, lr=1e-4)

    # GenericTrainer.train, one epoch of one step
    if config.latent_caching:
        train_set.start_next_epoch()
        setup_train_device(model, config)
    else:
        setup_train_device(model, config)
        train_set.start_next_epoch()
    loss = predict_loss(model, train_set.batches[0], config)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    print(f"train step: loss {loss.item():.4f}")

    # GenericTrainer.__validate
    validation_set.start_next_epoch()
    if args.setup_train_device:
        setup_train_device(model, config)
    print(f"validation: text_encoder_1 on {model.text_encoder_1.device}, "
          f"tokens_1 on {validation_set.batches[0]['tokens_1'].device}")
    for batch in validation_set.batches:
        with torch.no_grad():
            loss = predict_loss(model, batch, config)
        print(f"validation step: loss {loss.item():.4f}")


if __name__ == "__main__":
    main(sys.argv[1:])
