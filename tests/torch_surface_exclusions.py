"""What of torch 2.13's public surface lucid leaves out on purpose, and why.

``tests/test_torch_surface.py`` enumerates every public name of the namespaces training code
uses (``torch``, ``torch.Tensor``, ``nn``, ``nn.functional``, ``nn.init``, ``nn.utils``,
``autograd``, ``linalg``, ``fft``, ``special``, ``optim``, ``optim.lr_scheduler``,
``utils.data``, ``distributions``, ``amp``, ``distributed``) and the keywords of each of
torch's callables there. Each name must exist in lucid's matching namespace, match a
pattern in ``EXCLUDED`` (one category, one reason), or be listed in ``TO_BUILD``: names
lucid lacks and should have, which only ever shrinks (a listed name that lucid has fails the
test until it is taken off). Keywords likewise: ``KEYWORDS_EXCLUDED`` (by keyword name, with
the reason) and ``KEYWORDS_TO_BUILD``. The README's "torch's surface" table summarises this
file.

Patterns are ``fnmatch`` patterns over the qualified torch name ("torch.Tensor.q_scale").
"""

from __future__ import annotations

EXCLUDED: list[dict] = [
    {
        "category": "TorchScript, JIT and dispatcher internals",
        "reason": "lucid runs Python and numba/MLX kernels: there is no TorchScript IR, "
                  "graph executor, operator schema registry, dispatch keys or "
                  "__torch_function__ override machinery to expose.",
        "names": [
            "torch.AliasDb", "torch.AnyType", "torch.Argument", "torch.ArgumentSpec",
            "torch.AwaitType", "torch.Block", "torch.BoolType", "torch.CallStack",
            "torch.Capsule", "torch.ClassType", "torch.Code", "torch.CompilationUnit",
            "torch.CompleteArgumentSpec", "torch.ComplexType", "torch.ConcreteModuleType",
            "torch.ConcreteModuleTypeBuilder", "torch.DeepCopyMemoTable",
            "torch.DeserializationStorageContext", "torch.DeviceObjType", "torch.DictType",
            "torch.DisableTorchFunction", "torch.DisableTorchFunctionSubclass",
            "torch.DispatchKey", "torch.DispatchKeySet", "torch.EnumType", "torch.ErrorReport",
            "torch.ExcludeDispatchKeyGuard", "torch.ExecutionPlan", "torch.FileCheck",
            "torch.FloatType", "torch.FunctionSchema", "torch.Future", "torch.FutureType",
            "torch.Gradient", "torch.Graph", "torch.GraphExecutorState", "torch.IODescriptor",
            "torch.InferredType", "torch.IntType", "torch.InterfaceType", "torch.JITException",
            "torch.ListType", "torch.LiteScriptModule", "torch.Node", "torch.NoneType",
            "torch.NumberType", "torch.OperatorInfo", "torch.OptionalType",
            "torch.PyObjectType", "torch.PyTorchFileReader", "torch.PyTorchFileWriter",
            "torch.RRefType", "torch.Script*", "torch.SerializationStorageContext",
            "torch.StaticModule", "torch.StreamObjType", "torch.StringType", "torch.Tag",
            "torch.TensorType", "torch.TracingState", "torch.TupleType", "torch.Type",
            "torch.UnionType", "torch.Use", "torch.Value", "torch.import_ir_module*",
            "torch.merge_type_from_type_comment", "torch.parse_ir", "torch.parse_schema",
            "torch.parse_type_comment", "torch.unify_type_list", "torch.fork", "torch.wait",
            "torch.classes", "torch.futures", "torch.library", "torch.overrides",
            "torch.Tensor.as_subclass", "torch.Tensor.module_load",
            "torch.nn.functional.boolean_dispatch", "torch.nn.functional.handle_torch_function",
            "torch.nn.functional.has_torch_function*", "torch.autograd.handle_torch_function",
            "torch.autograd.has_torch_function", "torch.autograd.is_tensor_like",
            "torch.BufferDict", "torch.ModuleDict", "torch.ParameterDict", "torch.FatalError",
        ],
    },
    {
        "category": "Compiler stack (torch.compile, export, FX, symbolic shapes)",
        "reason": "lucid.compile is a documented pass-through; graph capture, export and "
                  "symbolic sizes belong to torch's compiler, which lucid does not have.",
        "names": ["torch.Sym*", "torch.sym_*", "torch.cond", "torch.while_loop", "torch.export",
                  "torch.fx", "torch.package"],
    },
    {
        "category": "Quantization",
        "reason": "quantized dtypes, observers and quantized kernels (FBGEMM/QNNPACK) are "
                  "a separate inference stack; lucid trains in float32/float64 and the "
                  "half types.",
        "names": ["torch.q_*", "torch.qint*", "torch.quint*", "torch.qscheme", "torch.quantize_*",
                  "torch.quantized_*", "torch.dequantize", "torch.int_repr",
                  "torch.fake_quantize_*", "torch.fused_moving_avg_obs_fake_quant",
                  "torch.choose_qparams_optimized", "torch.empty_quantized", "torch.ao",
                  "torch.quantization", "torch.Tensor.q_*", "torch.Tensor.qscheme",
                  "torch.Tensor.int_repr", "torch.Tensor.dequantize", "torch.nn.intrinsic",
                  "torch.per_channel_*", "torch.per_tensor_*", "torch.*Q*Int*Storage",
                  "torch.nn.qat", "torch.nn.quantizable", "torch.nn.quantized"],
    },
    {
        "category": "Device- and vendor-specific internals",
        "reason": "entry points of CUDA, cuDNN, MIOpen, oneDNN (mkldnn), FBGEMM, XPU, MTIA, "
                  "IPU, XLA, MAIA and Vulkan; lucid's devices are \"cpu\" (numba) and "
                  "\"gpu\" (MLX), each reached through the ordinary functions.",
        "names": ["torch.cudnn_*", "torch.miopen_*", "torch.mkldnn_*", "torch.fbgemm_*",
                  "torch.*ipu*", "torch.*xla*", "torch.xpu", "torch.mtia", "torch.*vulkan*",
                  "torch.Tensor.is_ipu", "torch.Tensor.ipu", "torch.Tensor.is_xla",
                  "torch.Tensor.xpu", "torch.Tensor.mtia", "torch.Tensor.is_mtia",
                  "torch.Tensor.is_maia", "torch.Tensor.is_vulkan", "torch.Tensor.to_mkldnn",
                  "torch.Tensor.is_mkldnn", "torch.Tensor.record_stream", "torch.Stream",
                  "torch.Event", "torch.AcceleratorError", "torch.get_autocast_gpu_dtype",
                  "torch.set_autocast_gpu_dtype", "torch.get_device_module",
                  "torch.has_lapack", "torch.has_mkl", "torch.has_openmp", "torch.has_spectral",
                  "torch.set_flush_denormal", "torch.init_num_threads"],
    },
    {
        "category": "Exotic dtypes",
        "reason": "float8/float4, sub-byte integers, bit types, complex32 and the "
                  "limited-support unsigned 16/32/64-bit integers have no arithmetic in "
                  "torch's CPU kernels either; lucid's dtypes are bool, uint8, the signed "
                  "integers, float16, bfloat16, float32, float64, complex64 and complex128.",
        "names": ["torch.float8_*", "torch.float4_*", "torch.int1", "torch.int2", "torch.int3",
                  "torch.int4", "torch.int5", "torch.int6", "torch.int7", "torch.uint1",
                  "torch.uint2", "torch.uint3", "torch.uint4", "torch.uint5", "torch.uint6",
                  "torch.uint7", "torch.uint16", "torch.uint32", "torch.uint64", "torch.bit",
                  "torch.bits*", "torch.complex32", "torch.chalf", "torch.Tensor.chalf",
                  "torch.nn.functional.scaled_mm", "torch.nn.functional.scaled_grouped_mm"],
    },
    {
        "category": "Storage objects",
        "reason": "a lucid tensor owns a numpy or MLX array (views share it); there is no "
                  "separate typed/untyped storage object, storage offset or shared-memory "
                  "storage to hand out (MLX views are copies, so offsets would not hold on "
                  "\"gpu\").",
        "names": ["torch.*Storage", "torch.StorageBase", "torch.storage", "torch.is_storage",
                  "torch.from_file",
                  "torch.Tensor.storage", "torch.Tensor.untyped_storage",
                  "torch.Tensor.storage_type", "torch.Tensor.storage_offset",
                  "torch.Tensor.set_", "torch.Tensor.is_set_to", "torch.Tensor.share_memory_",
                  "torch.Tensor.is_shared"],
    },
    {
        "category": "Sparse compressed layouts",
        "reason": "lucid's sparse tensors are COO (what graph networks build); CSR, CSC, BSR "
                  "and BSC storage and their index accessors are not provided.",
        "names": ["torch.sparse_csr", "torch.sparse_csc", "torch.sparse_bsr", "torch.sparse_bsc",
                  "torch.sparse_csr_tensor", "torch.sparse_csc_tensor", "torch.sparse_bsr_tensor",
                  "torch.sparse_bsc_tensor", "torch.sparse_compressed_tensor",
                  "torch.*_indices_copy", "torch.Tensor.to_sparse_cs*",
                  "torch.Tensor.to_sparse_bs*", "torch.Tensor.crow_indices",
                  "torch.Tensor.col_indices", "torch.Tensor.ccol_indices",
                  "torch.Tensor.row_indices", "torch.Tensor.is_sparse_csr"],
    },
    {
        "category": "Kernel entry points behind public functions",
        "reason": "ATen's internal entry points (SyncBatchNorm's CUDA statistics kernels, "
                  "the grid sampler and weight-norm helpers, autocast nesting counters) that "
                  "torch's own Python layers call; lucid's public functions cover what they "
                  "compute.",
        "names": ["torch.batch_norm_backward_*", "torch.batch_norm_elemt",
                  "torch.batch_norm_gather_stats*", "torch.batch_norm_stats",
                  "torch.batch_norm_update_stats", "torch.grid_sampler*",
                  "torch.affine_grid_generator", "torch.embedding_renorm_",
                  "torch.norm_except_dim", "torch.autocast_*_nesting", "torch.conv_tbc",
                  "torch.nn.functional.conv_tbc", "torch.hash_tensor",
                  "torch.Tensor.hash_tensor", "torch.thread_safe_generator",
                  "torch.Tensor.map2_", "torch.Tensor.index", "torch.segment_reduce",
                  "torch.native_*", "torch.slice_inverse", "torch.Tensor.slice_inverse",
                  "torch.autograd.is_view_replay_enabled", "torch.autograd.SavedTensor",
                  "torch.autograd.enforce_grad_layout_policy"],
    },
    {
        "category": "Removed or broken in torch",
        "reason": "still listed by torch 2.13 but raising there (\"deprecated since version "
                  "1.9 and is now removed\"), kept only for old autograd, or unusable "
                  "(NestedIOFunction raises AttributeError '_do_forward' when used).",
        "names": ["torch.Tensor.eig", "torch.Tensor.symeig", "torch.Tensor.lstsq",
                  "torch.Tensor.solve", "torch.Tensor.reinforce", "torch.Tensor.volatile",
                  "torch.eig", "torch.symeig", "torch.lstsq", "torch.solve",
                  "torch.matrix_rank", "torch.autograd.NestedIOFunction"],
    },
    {
        "category": "Telemetry and benchmarking",
        "reason": "torch.monitor statistics and the C++ throughput benchmark; lucid has its "
                  "profiler and pytest-benchmark suites.",
        "names": ["torch.AggregationType", "torch.AVG", "torch.SUM", "torch.monitor",
                  "torch.LockingLogger", "torch.NoopLogger", "torch.BenchmarkConfig",
                  "torch.BenchmarkExecutionStats", "torch.ThroughputBenchmark"],
    },
    {
        "category": "Namespaces outside this surface",
        "reason": "torch modules outside the namespaces training code uses (each would be "
                  "its own piece of work): model hub downloads, masked and nested tensors, "
                  "quasi-random engines, signal windows, torch's typing helpers and "
                  "namedtuple types, device modules.",
        "names": ["torch.hub", "torch.masked", "torch.nested", "torch.quasirandom",
                  "torch.signal", "torch.types", "torch.return_types", "torch.torch_version",
                  "torch.cpu", "torch.Tensor.to_padded_tensor", "torch.functional", "torch.jagged",
                  "torch.autograd.Profiler*", "torch.autograd.DeviceType",
                  "torch.autograd.kineto_available", "torch.autograd.profiler*"],
    },
    {
        "category": "Helpers and documentation strings of torch's own modules",
        "reason": "names torch's module files define for themselves (annotation aliases, "
                  "docstring fragments, argument checkers, mode tables), not functions "
                  "that code calls.",
        "names": ["torch.nn.functional.BroadcastingList*",
                  "torch.nn.functional.ScalingType", "torch.nn.functional.SwizzleType",
                  "torch.nn.functional.GRID_SAMPLE_*", "torch.nn.functional.assert_int_or_pair",
                  "torch.nn.functional.*_notes", "torch.linalg.common_notes",
                  "torch.nn.common_types", "torch.nn.factory_kwargs", "torch.fft.Tensor",
                  "torch.fft.*common_args", "torch.special.*common*",
                  "torch.optim.lr_scheduler.EPOCH_DEPRECATION_WARNING",
                  "torch.optim.lr_scheduler.Optimizer", "torch.optim.lr_scheduler.Tensor",
                  "torch.optim.lr_scheduler.bisect_right", "torch.optim.lr_scheduler.inf",
                  "torch.LoggerBase", "torch.PRIVATE_OPS", "torch.USE_*", "torch.classproperty",
                  "torch.compiled_with_cxx11_abi", "torch.get_file_path",
                  "torch.prepare_multiprocessing_environment", "torch.profiler_allow_*"],
    },
    {
        "category": "Deprecated DataPipes",
        "reason": "torch.utils.data's DataPipe API is deprecated and frozen (moved out to "
                  "torchdata, then retired); Dataset, IterableDataset and DataLoader cover "
                  "the loading path.",
        "names": ["torch.utils.data.*DataPipe", "torch.utils.data.DataChunk",
                  "torch.utils.data.functional_datapipe",
                  "torch.utils.data.guaranteed_datapipes_determinism",
                  "torch.utils.data.non_deterministic", "torch.utils.data.runtime_validation*",
                  "torch.utils.data.argument_validation", "torch.utils.data.datapipes",
                  "torch.utils.data.graph", "torch.utils.data.graph_settings"],
    },
    {
        "category": "torch's per-file import paths",
        "reason": "torch.distributions keeps one module per distribution "
                  "(torch.distributions.normal, ...); lucid.distributions exposes the same "
                  "classes from the package itself and from files named by family.",
        "names": ["torch.distributions.[a-z]*"],
    },
    {
        "category": "Distributed internals beyond the core",
        "reason": "lucid's data-parallel training runs on MPI: rendezvous stores, "
                  "process-group backends and their option structs, the C++ reducer and "
                  "logger, comm hooks, RPC, DeviceMesh and the debug/logging plumbing are "
                  "torch's c10d implementation, not the collective API training code calls.",
        "names": ["torch.distributed.*Options", "torch.distributed.*Store",
                  "torch.distributed.BackendConfig", "torch.distributed.get_backend_config",
                  "torch.distributed.BuiltinCommHookType", "torch.distributed.DebugLevel",
                  "torch.distributed.*debug_level*", "torch.distributed.DeviceMesh",
                  "torch.distributed.init_device_mesh", "torch.distributed.device_mesh",
                  "torch.distributed.GradBucket", "torch.distributed.Reducer",
                  "torch.distributed.Logger", "torch.distributed.ProcessGroupGloo",
                  "torch.distributed.algorithms", "torch.distributed.autograd",
                  "torch.distributed.rpc", "torch.distributed.c10d_logger",
                  "torch.distributed.logging_handlers", "torch.distributed.log",
                  "torch.distributed.config", "torch.distributed.constants",
                  "torch.distributed.distributed_c10d", "torch.distributed.remote_device",
                  "torch.distributed.rendezvous", "torch.distributed.register_rendezvous_handler",
                  "torch.distributed.record_comm", "torch.distributed.utils",
                  "torch.distributed.is_ucc_available", "torch.distributed.is_xccl_available",
                  "torch.distributed.get_pg_count", "torch.distributed.shrink_group",
                  "torch.distributed.split_group", "torch.distributed.GroupName",
                  "torch.distributed.RankType", "torch.distributed.QueueEmptyError",
                  "torch.distributed.get_default_backend_for_device"],
    },
]

# keywords lucid does not take, by category with the reason; patterns over "torch.f(kw=)"
KEYWORDS_EXCLUDED: list[dict] = [
    {
        "category": "Listed by torch's stubs or schemas, refused by its argument parser",
        "reason": "torch's type stubs and operator schemas name these keywords, but calling "
                  "torch 2.13 with them raises (\"takes no keyword arguments\", \"unexpected "
                  "keyword argument\"); lucid follows the runtime.",
        "keywords": ["torch.set_num_threads(num=)", "torch.set_num_interop_threads(num=)",
                     "torch.hsmm(input=)", "torch.range(pin_memory=)",
                     "torch.Tensor.new_tensor(pin_memory=)",
                     "torch.Tensor.requires_grad_(mode=)", "torch.Tensor.add(out=)",
                     "torch.Tensor.sub(out=)", "torch.Tensor.mul(out=)",
                     "torch.Tensor.floor_divide(out=)", "torch.Tensor.true_divide(out=)",
                     "torch.nn.functional.adaptive_avg_pool1d(out=)",
                     "torch.nn.functional.avg_pool1d(out=)",
                     "torch.nn.functional.channel_shuffle(out=)",
                     "torch.nn.functional.pixel_shuffle(out=)",
                     "torch.nn.functional.pixel_unshuffle(out=)"],
    },
    {
        "category": "Named tensors",
        "reason": "torch's named-tensor API is a prototype; lucid tensors have no dim names.",
        "keywords": ["*(names=)"],
    },
]

# names lucid lacks and should have; shrinks as they are built
TO_BUILD: set[str] = {
    # DLPack exchange
    "torch.from_dlpack", "torch.to_dlpack",
    # short-time Fourier transforms
    "torch.stft", "torch.istft", "torch.Tensor.stft", "torch.Tensor.istft",
    # applying Householder reflectors, and randomized low-rank solvers
    "torch.ormqr", "torch.Tensor.ormqr", "torch.lobpcg", "torch.pca_lowrank",
    "torch.svd_lowrank",
    # the top-level embedding_bag's four results (offset2bag, bag_size, max_indices)
    "torch.embedding_bag",
    # restriding and resizing in place
    "torch.as_strided_", "torch.Tensor.as_strided_", "torch.resize_as_sparse_",
    "torch.Tensor.resize_as_sparse_", "torch.Tensor.sparse_resize_",
    "torch.Tensor.sparse_resize_and_clear_",
    # autograd: forward-mode dual numbers, graph introspection and saved-tensor hooks,
    # per-tensor gradient dtypes, the output index of a node
    "torch.autograd.forward_ad", "torch.autograd.graph", "torch.Tensor.grad_dtype",
    "torch.Tensor.output_nr",
    # mixture-of-experts grouped GEMM
    "torch.nn.functional.grouped_mm",
}

# qualified name -> keywords lucid's version lacks and should take
KEYWORDS_TO_BUILD: dict[str, tuple[str, ...]] = {}
