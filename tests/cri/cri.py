#!/usr/bin/python3
"""A CRI v1 test client: drives a CRI runtime (containerd's CRI plugin) as
kubelet does, for toposhim's integration tests.

    cri.py --endpoint unix:///path/containerd.sock VERB ARGS...

Verbs (crictl's names; configs are JSON files in the proto field names of
cri.proto, as crictl's are):
    version                           the runtime's name and version
    runp [--runtime H] POD.json       RunPodSandbox; prints the pod sandbox id
    create POD_ID CTR.json POD.json   CreateContainer; prints the container id
    start ID | stop ID | rm ID        StartContainer, StopContainer, RemoveContainer
    stopp POD_ID | rmp POD_ID         StopPodSandbox, RemovePodSandbox
    pods-of UID_PREFIX                ListPodSandbox; the ids of the pods whose uid
                                      starts with UID_PREFIX (a test's clean-up)
    status ID                         ContainerStatus; prints "STATE EXIT_CODE REASON"
                                      (STATE: CONTAINER_CREATED|RUNNING|EXITED|UNKNOWN)
    exec ID CMD...                    ExecSync; its stdout and stderr, its exit code
    update ID CPUS [SHARES]           UpdateContainerResources with cpuset_cpus CPUS
                                      and cpu_shares SHARES (default 2, what the
                                      tests' containers are created with), as
                                      kubelet's CPU manager resizes a container

A failed call prints one line "<RPC>: <gRPC status code>: <status details>"
to stderr and exits 1, so a test can assert the runtime's message exactly.

cri.proto is compiled with grpc_tools.protoc (Debian's python3-grpc-tools)
at the first run into $CRI_PY_CACHE (default: a directory beside the
.proto's digest under the temp dir), never into the source tree.
"""
import argparse
import hashlib
import importlib
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO = os.path.join(HERE, "cri.proto")


def load_modules():
    """Compile cri.proto (once per content) and import its modules."""
    with open(PROTO, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:16]
    out = os.environ.get("CRI_PY_CACHE") or os.path.join(
        tempfile.gettempdir(), f"toposhim-cri-{os.getuid()}-{digest}")
    if not os.path.exists(os.path.join(out, "cri_pb2_grpc.py")):
        from grpc_tools import protoc
        os.makedirs(out, exist_ok=True)
        tmp = tempfile.mkdtemp(dir=out)
        rc = protoc.main(["protoc", f"-I{HERE}", f"--python_out={tmp}",
                          f"--grpc_python_out={tmp}", PROTO])
        if rc != 0:
            sys.exit(f"cri.py: protoc failed on {PROTO} ({rc})")
        for name in ("cri_pb2.py", "cri_pb2_grpc.py"):
            os.replace(os.path.join(tmp, name), os.path.join(out, name))
        os.rmdir(tmp)
    sys.path.insert(0, out)
    return importlib.import_module("cri_pb2"), importlib.import_module("cri_pb2_grpc")


def read_config(path, message):
    from google.protobuf import json_format
    with open(path) as f:
        return json_format.ParseDict(json.load(f), message, ignore_unknown_fields=False)


def main(argv):
    ap = argparse.ArgumentParser(prog="cri.py")
    ap.add_argument("--endpoint", required=True, help="unix:///path/to/socket")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per call")
    ap.add_argument("verb")
    ap.add_argument("args", nargs=argparse.REMAINDER)
    opts = ap.parse_args(argv)

    import grpc
    pb, pb_grpc = load_modules()
    channel = grpc.insecure_channel(opts.endpoint)
    rt = pb_grpc.RuntimeServiceStub(channel)
    args = opts.args

    def call(name, request):
        try:
            return getattr(rt, name)(request, timeout=opts.timeout)
        except grpc.RpcError as e:
            print(f"{name}: {e.code().name}: {e.details()}", file=sys.stderr)
            sys.exit(1)

    verb = opts.verb
    if verb == "version":
        r = call("Version", pb.VersionRequest(version="v1"))
        print(r.runtime_name, r.runtime_version, r.runtime_api_version)
    elif verb == "runp":
        handler = ""
        if args[:1] == ["--runtime"]:
            handler, args = args[1], args[2:]
        cfg = read_config(args[0], pb.PodSandboxConfig())
        r = call("RunPodSandbox", pb.RunPodSandboxRequest(config=cfg, runtime_handler=handler))
        print(r.pod_sandbox_id)
    elif verb == "create":
        pod_id, ctr_path, pod_path = args
        r = call("CreateContainer", pb.CreateContainerRequest(
            pod_sandbox_id=pod_id, config=read_config(ctr_path, pb.ContainerConfig()),
            sandbox_config=read_config(pod_path, pb.PodSandboxConfig())))
        print(r.container_id)
    elif verb == "start":
        call("StartContainer", pb.StartContainerRequest(container_id=args[0]))
    elif verb == "stop":
        call("StopContainer", pb.StopContainerRequest(container_id=args[0], timeout=10))
    elif verb == "rm":
        call("RemoveContainer", pb.RemoveContainerRequest(container_id=args[0]))
    elif verb == "stopp":
        call("StopPodSandbox", pb.StopPodSandboxRequest(pod_sandbox_id=args[0]))
    elif verb == "rmp":
        call("RemovePodSandbox", pb.RemovePodSandboxRequest(pod_sandbox_id=args[0]))
    elif verb == "pods-of":
        r = call("ListPodSandbox", pb.ListPodSandboxRequest())
        for item in r.items:
            if item.metadata.uid.startswith(args[0]):
                print(item.id)
    elif verb == "status":
        r = call("ContainerStatus", pb.ContainerStatusRequest(container_id=args[0]))
        print(pb.ContainerState.Name(r.status.state), r.status.exit_code, r.status.reason)
    elif verb == "exec":
        r = call("ExecSync", pb.ExecSyncRequest(container_id=args[0], cmd=args[1:], timeout=30))
        sys.stdout.buffer.write(r.stdout)
        sys.stderr.buffer.write(r.stderr)
        return r.exit_code
    elif verb == "update":
        shares = int(args[2]) if len(args) > 2 else 2
        call("UpdateContainerResources", pb.UpdateContainerResourcesRequest(
            container_id=args[0],
            linux=pb.LinuxContainerResources(cpuset_cpus=args[1], cpu_shares=shares)))
    else:
        ap.error(f"unknown verb '{verb}'")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
