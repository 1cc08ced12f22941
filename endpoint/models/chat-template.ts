/**
 * The ChatML chat template written into generated models (`tokenizer.chat_template`).
 * node-llama-cpp recognizes it and renders prompts with its ChatML wrapper, as it would for a
 * Qwen model downloaded by a user.
 */
export const CHATML_TEMPLATE =
  "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

/** A system and a user message as the template renders them, up to the assistant's answer. */
export function chatText(system: string, user: string): string {
  return `<|im_start|>system\n${system}<|im_end|>\n<|im_start|>user\n${user}<|im_end|>\n<|im_start|>assistant\n`;
}
