/**
 * What an instance type's name tells the stack: whether it has a GPU (the CUDA image), its vCPUs, and
 * whether its ML storage is an instance-store NVMe volume (SageMaker refuses a KMS key for it).
 */

/** Instance families with a GPU, which take the CUDA image. */
const GPU_FAMILIES = /^ml\.(g4dn|g5|g6|g6e|p3|p4d|p5)\./;

/** Instance families with local NVMe instance storage, for which SageMaker refuses a KMS key. */
const INSTANCE_STORAGE_FAMILIES = /^ml\.([a-z]+\d+[a-z]*d[a-z]*|g5|g6|g6e|p5)\./;

/** Whether an instance type's ML storage is an instance-store volume (no KMS key allowed). */
export function hasInstanceStorage(instanceType: string): boolean {
  return INSTANCE_STORAGE_FAMILIES.test(instanceType);
}

/** Whether an instance type has a GPU. */
export function isGpuInstance(instanceType: string): boolean {
  return GPU_FAMILIES.test(instanceType);
}

/**
 * vCPUs of an instance type from its size (`large` 2, `xlarge` 4, `Nxlarge` 4N, as in every
 * family the endpoint takes), or undefined for a size that rule does not cover.
 */
export function vcpusOf(instanceType: string): number | undefined {
  const size = /\.(\d*)(x?)large$/.exec(instanceType);
  if (!size) return undefined;
  if (!size[2]) return size[1] ? undefined : 2;
  return 4 * Number(size[1] || 1);
}
