// Which model files a workflow makes its engine server load, so the pool can
// send a job to a server that already holds them (model-affinity routing).
// The table names the loader classes of the real engine server (ComfyUI
// 0.3.64: nodes.py and comfy_extras/) and the inputs that name a file of a
// model folder; a model is keyed `folder/file`, so the same file loaded as a
// checkpoint and as a LoRA counts twice, as it is loaded twice.
//
// Custom loaders are caught by a generic rule: an input of a class the table
// does not know whose value is one of its combo's options and looks like a
// model file (its extension). /object_info cannot say more: the server sends
// a loader's combo as the bare list of file names, without the folder it
// came from, so the extension is the only hint; such a model is keyed
// `input_name/file`.
import type { NodeDefinition, Workflow } from '../types.ts';

const LOADERS: Record<string, Record<string, string>> = {
  CheckpointLoaderSimple: { ckpt_name: 'checkpoints' },
  CheckpointLoader: { ckpt_name: 'checkpoints' },
  unCLIPCheckpointLoader: { ckpt_name: 'checkpoints' },
  ImageOnlyCheckpointLoader: { ckpt_name: 'checkpoints' },
  CreateHookModelAsLora: { ckpt_name: 'checkpoints' },
  CreateHookModelAsLoraModelOnly: { ckpt_name: 'checkpoints' },
  LoraLoader: { lora_name: 'loras' },
  LoraLoaderModelOnly: { lora_name: 'loras' },
  CreateHookLora: { lora_name: 'loras' },
  CreateHookLoraModelOnly: { lora_name: 'loras' },
  VAELoader: { vae_name: 'vae' },
  UNETLoader: { unet_name: 'diffusion_models' },
  CLIPLoader: { clip_name: 'text_encoders' },
  DualCLIPLoader: { clip_name1: 'text_encoders', clip_name2: 'text_encoders' },
  TripleCLIPLoader: { clip_name1: 'text_encoders', clip_name2: 'text_encoders', clip_name3: 'text_encoders' },
  QuadrupleCLIPLoader: { clip_name1: 'text_encoders', clip_name2: 'text_encoders', clip_name3: 'text_encoders', clip_name4: 'text_encoders' },
  CLIPVisionLoader: { clip_name: 'clip_vision' },
  ControlNetLoader: { control_net_name: 'controlnet' },
  DiffControlNetLoader: { control_net_name: 'controlnet' },
  UpscaleModelLoader: { model_name: 'upscale_models' },
  StyleModelLoader: { style_model_name: 'style_models' },
  GLIGENLoader: { gligen_name: 'gligen' },
  HypernetworkLoader: { hypernetwork_name: 'hypernetworks' },
  PhotoMakerLoader: { photomaker_model_name: 'photomaker' },
  ModelPatchLoader: { name: 'model_patches' },
  AudioEncoderLoader: { audio_encoder_name: 'audio_encoders' },
};

const MODEL_FILE = /\.(safetensors|sft|ckpt|pt|pth|bin|gguf|onnx|pkl)$/i;

/** The options of a combo input as object_info writes it: a list, or COMBO with `options`. */
function comboOptions(def: NodeDefinition | undefined, input: string): readonly unknown[] | null {
  const spec = def?.input.required[input] ?? def?.input.optional?.[input];
  if (!spec) return null;
  if (Array.isArray(spec[0])) return spec[0];
  const options = spec[1]?.options;
  return spec[0] === 'COMBO' && Array.isArray(options) ? options : null;
}

/** The model files the workflow loads, each once, as `folder/file`. */
export function modelsOf(workflow: Workflow, defs?: Record<string, NodeDefinition> | null): string[] {
  const found = new Set<string>();
  for (const node of Object.values(workflow)) {
    if (!node || typeof node.inputs !== 'object' || node.inputs === null) continue;
    const known = LOADERS[node.class_type];
    for (const [input, value] of Object.entries(node.inputs)) {
      // A link ([id, index]) names no file: what it carries was loaded by the node it comes from.
      if (typeof value !== 'string' || value === '') continue;
      if (known) {
        if (known[input]) found.add(`${known[input]}/${value}`);
      } else if (MODEL_FILE.test(value) && comboOptions(defs?.[node.class_type], input)?.includes(value)) {
        found.add(`${input}/${value}`);
      }
    }
  }
  return [...found];
}
