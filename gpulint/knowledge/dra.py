"""Dynamic Resource Allocation (DRA): the shapes the API server decodes for each
`resource.k8s.io` version, the releases that serve them, and what the NVIDIA DRA
driver for GPUs publishes (device classes, device attributes, capacities, the
opaque configuration it accepts).

Shapes are transcribed from kubernetes/api `resource/{v1alpha3,v1beta1,v1beta2,v1}/types.go`
(the JSON names of each struct) and the releases from their
`zz_generated.prerelease-lifecycle.go` and `register.go` at each release (v0.26.0 to v0.34.0); the NVIDIA facts from
NVIDIA/k8s-dra-driver-gpu (now kubernetes-sigs/dra-driver-nvidia-gpu) at v25.3.0,
v25.8.0, v25.12.0 and its main branch: `cmd/gpu-kubelet-plugin/deviceinfo.go` and
`mig.go`, `cmd/compute-domain-kubelet-plugin/deviceinfo.go`, the chart's
`templates/deviceclass-*.yaml` and `api/nvidia.com/resource/v1beta1`.
"""

from __future__ import annotations

from gpulint.regex import lazy

GROUP = "resource.k8s.io"

# A shape is a dict of JSON field -> the shape of its value (a dict for a struct, a
# struct shape also describes each item of a list of structs) or None for a value whose
# inside the decoder does not judge by field names (scalars, string lists, maps keyed by
# the user, the opaque `parameters`).
_SELECTOR = {"cel": {"expression": None}}
_TOLERATION = {"key": None, "operator": None, "value": None, "effect": None, "tolerationSeconds": None}
_CAPACITY = {"requests": None}
# the fields of one device request that picks devices; v1beta1 writes them on the request,
# v1beta2 and v1 under `exactly`; a `firstAvailable` sub-request has them without adminAccess
_EXACT = {"deviceClassName": None, "selectors": _SELECTOR, "allocationMode": None, "count": None,
          "adminAccess": None, "tolerations": _TOLERATION, "capacity": _CAPACITY}
_SUBREQUEST = {"name": None, **{k: v for k, v in _EXACT.items() if k != "adminAccess"}}
_OPAQUE = {"opaque": {"driver": None, "parameters": None}}


_CONSTRAINT = {"requests": None, "matchAttribute": None, "distinctAttribute": None}


def _claim_spec(request: dict, constraint: dict = _CONSTRAINT, **more) -> dict:
    return {"devices": {"requests": request, "constraints": constraint,
                        "config": {"requests": None, **_OPAQUE}}, **more}


_CLASS_SPEC = {"selectors": _SELECTOR, "config": _OPAQUE, "extendedResourceName": None}
_FLAT_REQUEST = {"name": None, **_EXACT, "firstAvailable": _SUBREQUEST}
_NESTED_REQUEST = {"name": None, "exactly": _EXACT, "firstAvailable": _SUBREQUEST}

# v1alpha3, the first structured-parameters API (1.31 to 1.33): the flat request without
# `capacity`; `controller` (claims) and `suitableNodes` (classes) decoded in 1.31 only and
# tombstoned in 1.32; `firstAvailable` and `tolerations` came in 1.33. A union of its releases.
_ALPHA3_EXACT = {k: v for k, v in _EXACT.items() if k != "capacity"}
_ALPHA3_REQUEST = {"name": None, **_ALPHA3_EXACT,
                   "firstAvailable": {k: v for k, v in _SUBREQUEST.items() if k != "capacity"}}

# apiVersion -> kind -> the shape of the object's `spec`
SPECS: dict[str, dict[str, dict]] = {
    f"{GROUP}/v1alpha3": {
        "DeviceClass": {"selectors": _SELECTOR, "config": _OPAQUE, "suitableNodes": None},
        "ResourceClaim": _claim_spec(_ALPHA3_REQUEST, {"requests": None, "matchAttribute": None}, controller=None),
        "ResourceClaimTemplate": {"metadata": None, "spec": _claim_spec(
            _ALPHA3_REQUEST, {"requests": None, "matchAttribute": None}, controller=None)},
    },
}
for _version, _request in (("v1beta1", _FLAT_REQUEST), ("v1beta2", _NESTED_REQUEST), ("v1", _NESTED_REQUEST)):
    SPECS[f"{GROUP}/{_version}"] = {
        "DeviceClass": _CLASS_SPEC,
        "ResourceClaim": _claim_spec(_request),
        "ResourceClaimTemplate": {"metadata": None, "spec": _claim_spec(_request)},
    }

# The fields of `exactly` (what v1beta1 writes on the request itself).
EXACT_FIELDS = tuple(_EXACT)

# apiVersion -> (introduced, deprecated, removed) Kubernetes minor releases (all 1.x),
# None where the version is not deprecated.
LIFECYCLE: dict[str, tuple[int, int | None, int | None]] = {
    # classic DRA (a ResourceClass names the driver, claims carry parametersRef)
    f"{GROUP}/v1alpha1": (26, None, 27),
    f"{GROUP}/v1alpha2": (27, None, 31),
    # structured parameters; v1alpha3 was superseded by v1beta1 in 1.32 (the storage version
    # moved there) and its claim and class types left the API in 1.34, where v1alpha3 keeps
    # only DeviceTaintRule
    f"{GROUP}/v1alpha3": (31, 32, 34),
    f"{GROUP}/v1beta1": (32, 35, 38),
    f"{GROUP}/v1beta2": (33, 36, 39),
    f"{GROUP}/v1": (34, None, None),
}
_RELEASE = lazy(r"^v?1\.(\d+)(?:\.\d+)?$")


def kubernetes_minor(stated: object) -> int | None:
    """The minor release of a stated Kubernetes version ("1.34", "v1.34.2"), or None."""
    match = _RELEASE.match(str(stated or ""))
    return int(match.group(1)) if match else None


def stated_minor(options, settings) -> int | None:
    """The cluster's Kubernetes minor release: `--kubernetes-version`, else the fleet
    configuration's `kubernetes-version`."""
    stated = options.get("kubernetes_version") or (getattr(settings, "fleet", None) or {}).get("kubernetes-version")
    return kubernetes_minor(stated)


def serves(version: str, kind: str, minor: int) -> bool:
    """Whether Kubernetes 1.`minor` serves `kind` in `version`."""
    start, _, end = LIFECYCLE.get(version, (99, None, None))
    return start <= minor and (end is None or minor < end) and kind in VERSION_KINDS.get(version, ())


DRA_KINDS = ("DeviceClass", "ResourceClaim", "ResourceClaimTemplate")
# classic DRA's own kinds (v1alpha1, v1alpha2), gone with it in 1.31 (PodSchedulingContext
# lived on in v1alpha3 of 1.31 only)
CLASSIC_KINDS = ("ResourceClass", "ResourceClaimParameters", "ResourceClassParameters", "PodScheduling",
                 "PodSchedulingContext")
# apiVersion -> the DRA kinds it holds (ResourceSlice, which drivers write, left out)
VERSION_KINDS: dict[str, tuple[str, ...]] = {
    f"{GROUP}/v1alpha1": ("ResourceClass", "ResourceClaim", "ResourceClaimTemplate", "PodScheduling"),
    f"{GROUP}/v1alpha2": ("ResourceClass", "ResourceClaim", "ResourceClaimTemplate", "PodSchedulingContext",
                          "ResourceClaimParameters", "ResourceClassParameters"),
    f"{GROUP}/v1alpha3": DRA_KINDS + ("PodSchedulingContext",),
    **{f"{GROUP}/{v}": DRA_KINDS for v in ("v1beta1", "v1beta2", "v1")},
}
# versions an API server serves only when `--runtime-config` turns them on; the beta ones too
# before DRA was on by default in 1.34 (1.32 and 1.33 need the DynamicResourceAllocation gate
# and the API group turned on)
ALPHA_VERSIONS = tuple(v for v in VERSION_KINDS if "alpha" in v)
ON_BY_DEFAULT_FROM = 34
# the Kubernetes release the NVIDIA DRA driver's chart needs (`kubeVersion: ">=1.32.0-0"` from
# v25.8; v25.3 renders its DeviceClasses in v1beta1, which 1.32 brought)
NVIDIA_DRIVER_MIN_MINOR = 32

# core/v1: a pod's `resourceClaims[]` and a container's `resources.claims[]`. `source`
# was tombstoned in 1.31, when its two fields moved onto the entry.
POD_CLAIM_FIELDS = ("name", "resourceClaimName", "resourceClaimTemplateName")
CONTAINER_CLAIM_FIELDS = ("name", "request")

# ---------------------------------------------------------------- the NVIDIA DRA driver

GPU_DRIVER = "gpu.nvidia.com"
COMPUTE_DOMAIN_DRIVER = "compute-domain.nvidia.com"

# DeviceClass name -> the chart value that creates it (`resources.<x>.enabled`)
DRIVER_CLASSES = {
    "gpu.nvidia.com": "gpus",
    "mig.nvidia.com": "gpus",
    "vfio.gpu.nvidia.com": "gpus",
    "compute-domain-daemon.nvidia.com": "computeDomains",
    "compute-domain-default-channel.nvidia.com": "computeDomains",
}
# the classes whose devices are GPUs or parts of them (a compute domain channel is not)
GPU_CLASSES = ("gpu.nvidia.com", "mig.nvidia.com")

# attribute domain -> the attribute names any release publishes there (a union over
# full GPUs, MIG devices and VFIO GPUs; `index`, `minor`, `parentIndex` until v25.3,
# `pcieBusID` until v25.8, then the standard `resource.kubernetes.io/pciBusID`)
ATTRIBUTES: dict[str, frozenset[str]] = {
    GPU_DRIVER: frozenset({
        "type", "uuid", "productName", "brand", "architecture", "cudaComputeCapability",
        "driverVersion", "cudaDriverVersion", "addressingMode", "parentUUID", "profile",
        "index", "minor", "parentIndex", "pcieBusID", "deviceID", "vendorID", "numa",
        "iommuFDEnabled"}),
    COMPUTE_DOMAIN_DRIVER: frozenset({"type", "id"}),
}
# capacity domain -> names; MIG devices also publish one `memorySlice<N>` per slice
CAPACITIES: dict[str, frozenset[str]] = {
    GPU_DRIVER: frozenset({"memory", "multiprocessors", "copyEngines", "decoders", "encoders",
                           "jpegEngines", "ofaEngines", "addressableMemory"}),
    COMPUTE_DOMAIN_DRIVER: frozenset(),
}
CAPACITY_PATTERNS = {GPU_DRIVER: r"memorySlice\d+"}


def is_nvidia_domain(domain: str) -> bool:
    """A domain the NVIDIA drivers own or one written as if they did (`nvidia.com`)."""
    return domain == "nvidia.com" or domain.endswith(".nvidia.com")


# The opaque configuration the GPU driver decodes strictly (`StrictDecoder`):
# apiVersion resource.nvidia.com/v1beta1, kind -> the shape of the rest.
CONFIG_API_VERSION = "resource.nvidia.com/v1beta1"
_MPS = {"defaultActiveThreadPercentage": None, "defaultPinnedDeviceMemoryLimit": None,
        "defaultPerDevicePinnedMemoryLimit": None}
CONFIG_KINDS: dict[str, dict] = {
    "GpuConfig": {"sharing": {"strategy": None, "timeSlicingConfig": {"interval": None}, "mpsConfig": _MPS}},
    "MigDeviceConfig": {"sharing": {"strategy": None, "mpsConfig": _MPS}},
    "VfioDeviceConfig": {"iommu": {"backendPolicy": None, "enableAPIDevice": None}},
}
# the compute domain driver's kinds, passed to `compute-domain.nvidia.com`
COMPUTE_DOMAIN_CONFIG_KINDS = ("ComputeDomainChannelConfig", "ComputeDomainDaemonConfig")
SHARING_STRATEGIES = {"TimeSlicing": "TimeSlicingSettings", "MPS": "MPSSupport"}
TIME_SLICE_INTERVALS = ("Default", "Short", "Medium", "Long")
