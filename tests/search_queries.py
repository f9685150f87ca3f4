"""What readers type into search, and the entries it must find: one table for the site's search
box (test_browser_site.py) and `mlfail search` (test_search.py).

The ranking rules these rely on (generator/search.py; search.js reads the same table of codes,
weights and stopwords from shared.js): text that matches a signature puts its entry first;
a code (`ncclSystemError`, `Xid 79`) puts the entries that carry it in their title or signatures
above word matches; words count by where an entry has them and how rare they are; ties go by
title. Every expected entry is stated as a set of the entries that answer the question, so a
new entry that answers it as well does not break a row, and a row says "first three", not "first"."""

from __future__ import annotations

OOM_FAMILY = {
    "cuda-oom-forward",
    "cuda-oom-backward",
    "cuda-memory-fragmentation",
    "caching-allocator-debugging",
    "cuda-memory-summary-reading",
    "activation-memory-spike",
    "cuda-error-out-of-memory",
}
# Identifiers, phrases and short words, and the entries of which one must be among the first three.
TYPED = [
    ("CUBLAS_STATUS_ALLOC_FAILED", {"cublas-status-alloc-failed"}),
    ("ncclUnhandledCudaError", {"nccl-unhandled-cuda-error"}),
    ("torch.distributed.elastic.multiprocessing.errors.ChildFailedError", {"torchrun-child-failed-error"}),
    ("torch.cuda.OutOfMemoryError", OOM_FAMILY),
    ("Tried to allocate", {"cuda-oom-forward"}),
    ("nccl timeout", {"nccl-watchdog-timeout"}),
    (
        "fsdp",
        {
            "fsdp-flat-param-mixed-dtype",
            "fsdp-flat-param-mixed-requires-grad",
            "fsdp-sharded-param-outside-forward",
            "fsdp-full-state-dict-oom-hang",
            "fsdp2-dtensor-mixed-tensor",
            "verl-fsdp2-fully-shard-module-attributeerror",  # an FSDP2 failure, tagged fsdp
        },
    ),
    ("zero3 slow", {"deepspeed-zero3-slow-prefetch"}),
    ("nan loss", {"nan-loss-divergence"}),
    ("gradient overflow", {"fp16-loss-scale-collapse"}),
    ("Xid 79", {"gpu-fallen-off-bus"}),
    ("address already in use", {"rendezvous-address-in-use"}),
    ("device-side assert", {"device-side-assert-triggered"}),
    ("Expected to mark a variable ready only once", {"ddp-variable-marked-ready-twice"}),
    ("Must flatten tensors with uniform dtype", {"fsdp-flat-param-mixed-dtype"}),
    ("unrecognized arguments --local-rank", {"launcher-local-rank-argument-rejected"}),
    ("recompile limit", {"torch-compile-recompile-limit"}),
    ("graph break", {"torch-compile-graph-breaks"}),
    ("flash_attn undefined symbol", {"flash-attn-undefined-symbol"}),
    ("no kernel image", {"cuda-no-kernel-image"}),
    ("bus error shared memory", {"dataloader-shared-memory-exhausted"}),
    ("size mismatch for", {"checkpoint-size-mismatch", "deepspeed-zero3-empty-weights"}),
    ("weights not initialized", {"hf-weights-not-initialized"}),
    ("slurm oom", {"slurm-cgroup-oom-kill"}),
    ("expandable_segments", {"cuda-memory-fragmentation"}),
    ("IBV_WC_RETRY_EXC_ERR", {"nccl-remote-error-infiniband"}),
    ("Duplicate GPU detected", {"nccl-duplicate-gpu-detected"}),
    ("CUDA_DEVICE_MAX_CONNECTIONS", {"megatron-cuda-device-max-connections"}),
    ("Invalidate trace cache", {"zero3-trace-cache-invalidation"}),
    ("ncclSystemError", {"nccl-unhandled-system-error"}),
    ("ncclInternalError", {"nccl-socket-interface-not-found"}),
    ("EADDRINUSE", {"rendezvous-address-in-use"}),
    ("cudaErrorSystemNotReady", {"fabric-manager-system-not-initialized"}),
    ("Xid 48", {"gpu-uncorrectable-ecc-error"}),
]
# The seed pages' own symptom rows, asked as a person would type them.
SEED_QUESTIONS = [
    ("prefetch time dominates the step profile", {"deepspeed-zero3-slow-prefetch"}),
    ("_prefetch_params_non_blocking takes most of the step time", {"deepspeed-zero3-slow-prefetch"}),
    ("zero-3 twice as slow as zero-2", {"deepspeed-zero3-slow-prefetch"}),
    ("model loads fine but oom on the first forward pass", {"zero3-prefetch-forward-oom"}),
    ("reducing the batch size does not fix the oom", {"zero3-prefetch-forward-oom"}),
    ("memory trace points at deepspeed buffers not activations", {"zero3-prefetch-forward-oom"}),
]
# Everyday questions in a reader's words.
QUESTIONS = [
    ("loss goes nan after a few steps", {"nan-loss-divergence", "fp16-loss-scale-collapse"}),
    (
        "training hangs at the first all reduce",
        {"nccl-watchdog-timeout", "collective-mismatch-desync", "gpu-p2p-acs-iommu-hang", "nccl-peer-connect-failed"},
    ),
    ("dataloader killed", {"dataloader-worker-killed"}),
    ("cuda out of memory during backward", {"cuda-oom-backward"}),
    ("out of memory in optimizer step", {"cuda-oom-optimizer-step"}),
    ("loss scale keeps going down", {"fp16-loss-scale-collapse"}),
    ("training is slow and gpu utilization is low", {"gpu-utilization-low", "dataloader-input-bottleneck"}),
    ("torch.compile keeps recompiling", {"torch-compile-recompile-limit", "torch-xla-recompilation-every-step"}),
    ("missing keys when loading a checkpoint", {"checkpoint-missing-unexpected-keys"}),
    ("bus error in docker dataloader shared memory", {"dataloader-shared-memory-exhausted"}),
    ("bf16 not supported on my gpu", {"bf16-unsupported"}),
    ("nvidia driver is too old", {"nvidia-driver-too-old"}),
    ("no space left on device while saving a checkpoint", {"checkpoint-save-disk-full"}),
    ("slurm killed my job for memory", {"slurm-cgroup-oom-kill"}),
    (
        "multi node training stuck at rendezvous",
        {"rendezvous-timeout-missing-nodes", "rendezvous-store-connect-timeout"},
    ),
    ("expected all tensors to be on the same device", {"tensors-on-different-devices"}),
    ("tokenizer has no pad token", {"tokenizer-missing-pad-token"}),
    ("illegal memory access", {"cuda-illegal-memory-access"}),
    ("ddp error about unused parameters", {"ddp-unused-parameters"}),
    ("every epoch sees the same data order with a distributed sampler", {"distributed-sampler-set-epoch-missing"}),
    ("lora target modules not found", {"peft-target-modules-not-found"}),
    ("fsdp full state dict save runs out of memory", {"fsdp-full-state-dict-oom-hang"}),
    ("gpu fell off the bus", {"gpu-fallen-off-bus"}),
]
# Whole error lines, pasted: the entry that prints it must come first.
PASTED = [
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", "cuda-oom-forward"),
    ("RuntimeError: CUDA error: an illegal memory access was encountered", "cuda-illegal-memory-access"),
    (
        "ValueError: Must flatten tensors with uniform dtype but got torch.bfloat16 and torch.float16",
        "fsdp-flat-param-mixed-dtype",
    ),
    (
        "[rank3]: ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. ",
        "nccl-unhandled-system-error",
    ),
    (
        "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. "
        "port: 29500, useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use",
        "rendezvous-address-in-use",
    ),
    (
        "slurmstepd: error: Detected 1 oom_kill event in StepId=11300781.0. Some of the step tasks have been OOM Killed.",
        "slurm-cgroup-oom-kill",
    ),
    (
        "RuntimeError: PytorchStreamReader failed reading zip archive: failed finding central directory",
        "checkpoint-truncated-archive",
    ),
    (
        "[rank1]:[E1129 10:42:17.532806824 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=40211, OpType=ALLREDUCE, NumelIn=262144000, NumelOut=262144000, Timeout(ms)=600000) ran for "
        "600043 milliseconds before timing out.",
        "nccl-watchdog-timeout",
    ),
]
