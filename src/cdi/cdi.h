/*
 * cdi.h - Container Device Interface: qualified device names, spec files
 * (JSON and YAML), the registry of spec dirs, and container edits applied to
 * an OCI config tree.
 *
 * Implements: CDI specification SPEC.md, versions 0.3.0 to 1.1.0, with the
 * semantics of the reference library (cncf-tags/container-device-interface)
 * at main where main and v1.1.0 differ:
 *  - "Qualified device names" (vendor/class=name; '.' allowed in class);
 *  - "CDI file format" (every field of a spec, a device and containerEdits,
 *    intelRdt with closID/l3CacheSchema/memBwSchema/schemata/
 *    enableMonitoring, additionalGids, netDevices), minimum versions;
 *  - "Container Edits" applied in CDI order: env (an existing NAME= is
 *    replaced in place, main semantics), deviceNodes, mounts, hooks, intelRdt,
 *    additionalGids, netDevices;
 *  - the `cdi.k8s.io/` annotation request channel.
 *
 * Deliberate differences from the reference (each one stricter or safer):
 *  - unknown keys and duplicate keys reject a spec file; annotation keys and
 *    the annotations' total size (256 KiB) are validated (k8s rules);
 *  - paths of device nodes and hooks, and mount containerPaths, must be
 *    absolute, and the container paths hold no ".." component (the runtime
 *    resolves one inside the rootfs: a node at "/dev/../etc/passwd" lands on
 *    the image's /etc/passwd); hook timeouts must be > 0; fileMode must fit
 *    in 07777;
 *  - a host device node that is a symlink (e.g. /dev/dri/by-path/...) is
 *    resolved with stat(2), not rejected as "not a device node": operators
 *    point specs at the stable by-path/by-id names;
 *  - permissions "none" adds the device node but no cgroup allow rule (an
 *    allow rule with empty access grants nothing in a default-deny list, and
 *    runtimes differ on how they read an empty access string);
 *  - a same-dir conflict only hides a device when that dir is the one with
 *    the highest priority defining it (the reference hides it even when a
 *    later dir overrides it);
 *  - "unresolvable CDI devices" lists only the unresolved names (the
 *    reference lists every requested name), comma-space separated;
 *  - a cdi.k8s.io/ annotation holding something that is not a qualified
 *    name ("foobar", the empty name of "a,,b", " vendor.com/x=y") is
 *    refused naming the annotation, not listed as an unresolvable device;
 *  - a hook whose env is absent, null or [] gets TS_CDI_HOOK_DEFAULT_ENV (the
 *    reference leaves it absent, and runc 1.1 then runs a createContainer
 *    hook with the container's environment: the image's LD_PRELOAD);
 *  - a mount without a type whose options hold neither "bind" nor "rbind"
 *    becomes type "bind" with options "rbind" then its own ("ro" only when
 *    asked): the reference passes it on as it is, and runc fails it with
 *    "no such device" (a mount(2) without a file system type);
 *  - a device node whose hostPath is not its path, for a container the
 *    runtime sets up in a user namespace (the config has a "user"
 *    namespace, or toposhim itself runs in one: rootless podman, runc
 *    --rootless), becomes a bind mount of hostPath at path (options
 *    ["bind"]) with no linux.devices entry or mount left at that path: such
 *    a runtime cannot mknod and binds the host's file at the *container*
 *    path instead (runc's createDevices, crun's the same), which is absent
 *    or another device.  Its cgroup rule stays; its fileMode, uid and gid
 *    cannot apply to a bind mount (the host node's show).  The reference
 *    leaves the linux.devices entry, and the container gets the wrong node
 *    or fails to start.  Such a node must be its host node (a missing one,
 *    or other numbers than the spec's, is refused), and not at a path the
 *    runtime makes itself (/dev/null, zero, full, tty, random, urandom:
 *    it binds the host's own over it).
 *
 * Ownership: a registry owns its specs; every pointer it hands out is
 * borrowed and valid until ts_cdi_registry_free().  Nothing here prints,
 * exits or execs.
 */
#ifndef TS_CDI_CDI_H
#define TS_CDI_CDI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "oci/json.h"
#include "util/error.h"

/** Prefix of the OCI annotations that request CDI devices. */
#define TS_CDI_ANNOTATION_PREFIX "cdi.k8s.io/"
/** Container env var read as a request channel when ts_cdi_options.env_requests is set. */
#define TS_CDI_ENV_REQUEST "TOPOSHIM_CDI_DEVICES"
/** The env of a CDI hook whose spec gives none (absent, null or []); see ts_cdi_edits_apply(). */
#define TS_CDI_HOOK_DEFAULT_ENV "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
/** Most distinct device names one container may request (annotations and env together). */
#define TS_CDI_MAX_REQUESTS 256
/** Largest deviceNodes major and minor a spec may give: a Linux device number's 12-bit
 *  major and 20-bit minor (the kernel's MINORBITS). */
#define TS_CDI_MAJOR_MAX 4095
#define TS_CDI_MINOR_MAX 1048575
/** Longest qualified device name accepted in a request, in bytes. */
#define TS_CDI_MAX_NAME_BYTES 1024
/** Default persistent index (in the state dir; written only when that dir exists). */
#define TS_CDI_DEFAULT_INDEX "/run/toposhim/cdi-index"

/* --- qualified device names ---------------------------------------------- */

/**
 * Check a vendor name: a letter, then letters, digits, '_', '-', '.', ending
 * in a letter or digit.
 * @param[in]  vendor  NUL-terminated; borrowed.
 * @param[out] err     set iff the return value is negative; message
 *                     "invalid vendor '<v>': <reason>".
 * @return 0; -EINVAL.
 */
int ts_cdi_vendor_validate(const char *vendor, struct ts_error **err);

/** Check a class name (same rules as a vendor name, CDI >= 0.6.0). @return 0; -EINVAL. */
int ts_cdi_class_validate(const char *class, struct ts_error **err);

/**
 * Check a device name: a letter or digit, then letters, digits, '_', '-',
 * '.', ':', ending in a letter or digit.
 * @return 0; -EINVAL with "invalid device name '<n>': <reason>".
 */
int ts_cdi_device_name_validate(const char *device_name, struct ts_error **err);

/**
 * Split and check a qualified device name "vendor/class=name".
 * @param[in]  qualified_name  NUL-terminated; borrowed.
 * @param[out] ret_vendor, ret_class, ret_device_name  each newly allocated,
 *             caller frees; any may be NULL when not wanted.  Written only on
 *             success.
 * @return 0; -EINVAL with "invalid qualified device name '<q>': <reason>";
 *         -ENOMEM.
 */
int ts_cdi_qualified_name_parse(const char *qualified_name, char **ret_vendor, char **ret_class,
				char **ret_device_name, struct ts_error **err);

/** True iff qualified_name passes ts_cdi_qualified_name_parse(). */
bool ts_cdi_qualified_name_is_valid(const char *qualified_name);

/**
 * Collect the CDI device requests of an OCI config: the value of every
 * annotation whose key starts with "cdi.k8s.io/", keys in strcmp order, each
 * value split on ',', kept in that order with duplicates dropped (first one
 * wins).  Every name must be a qualified device name (vendor/class=name),
 * from an annotation as from TOPOSHIM_CDI_DEVICES.
 * @param[in]  config       OCI config root; borrowed.
 * @param[in]  config_name  for messages, e.g. "config.json".
 * @param[in]  env_requests also read TOPOSHIM_CDI_DEVICES=... from
 *                          /process/env (appended after the annotations).
 * @param[out] ret_names    NULL-terminated vector (empty when no request);
 *                          caller frees every string and the vector.
 * @return the number of names (>= 0); -EINVAL when a cdi.k8s.io/ annotation
 *         is not a string ("<config_name>: '/annotations/<key>': expected
 *         string, got <type>") or holds a name that is not a qualified one
 *         ("<config_name>: '/annotations/<key>': invalid qualified device
 *         name 'foobar': missing '='", also for the empty name of ",,"; the
 *         same with '/process/env/<i>' for TOPOSHIM_CDI_DEVICES);
 *         -EINVAL when the request holds more than TS_CDI_MAX_REQUESTS
 *         distinct names ("...: '/annotations/<key>': more than 256 CDI
 *         device names requested", naming where the limit was crossed) or a
 *         name longer than TS_CDI_MAX_NAME_BYTES ("...: device name longer
 *         than 1024 bytes '<its first 64 bytes>...'"): the work and every
 *         message stay small whatever the annotation holds; -ENOMEM.
 */
int ts_cdi_requests_from_config(const struct ts_json *config, const char *config_name,
				bool env_requests, char ***ret_names, struct ts_error **err);

/**
 * ts_cdi_requests_from_config(), also telling where each name was asked
 * for.
 * @param[out] ret_where  NULL, or a NULL-terminated vector parallel to
 *                        *ret_names: the JSON pointer of the annotation or
 *                        env entry that asked for each name first
 *                        ("/annotations/cdi.k8s.io~1gpu",
 *                        "/annotations/toposhim.io~1cdi.worker",
 *                        "/process/env/3"); caller frees it like *ret_names.
 * @return as ts_cdi_requests_from_config().
 */
int ts_cdi_requests_collect(const struct ts_json *config, const char *config_name,
			    bool env_requests, char ***ret_names, char ***ret_where,
			    struct ts_error **err);

/* --- spec files ----------------------------------------------------------- */

/** One parsed and validated spec file. */
struct ts_cdi_spec;

/**
 * Parse and validate a spec file's text.  ".yaml" files go through libyaml
 * (first document only, YAML 1.1 plain scalar rules: 0640 octal, 0x10 hex,
 * yes/no/on/off booleans, ~/null); every other name is parsed as JSON.  A
 * boolean or number where the schema wants a string becomes its text
 * (true -> "true", 0640 -> "416"), as the reference's YAML-to-JSON step does.
 * @param[in]  buf, len   the file's bytes.
 * @param[in]  spec_path  the file name, used in messages and to pick YAML.
 * @param[in]  priority   index of the spec dir (higher wins); stored.
 * @param[out] ret        the spec; free with ts_cdi_spec_free().
 * @param[out] err        message "<spec_path>: '<json-pointer>': <problem>"
 *                        naming the field and value, or
 *                        "<spec_path>: line L column C: <syntax problem>".
 * @return 0; -EINVAL (syntax, schema, names, versions); -ENOMEM.
 */
int ts_cdi_spec_parse(const char *buf, size_t len, const char *spec_path, unsigned priority,
		      struct ts_cdi_spec **ret, struct ts_error **err);

/**
 * Read and parse a spec file (see ts_cdi_spec_parse()).
 * @return 0; -errno of open/read ("<path>: cannot open"); -EFBIG over 16 MiB;
 *         -EINVAL; -ENOMEM.
 */
int ts_cdi_spec_load(const char *spec_path, unsigned priority, struct ts_cdi_spec **ret,
		     struct ts_error **err);

/** Free a spec (NULL accepted). @return NULL. */
struct ts_cdi_spec *ts_cdi_spec_free(struct ts_cdi_spec *spec);

/** The spec's file name, borrowed. */
const char *ts_cdi_spec_path(const struct ts_cdi_spec *spec);
/** The spec's kind "vendor/class", borrowed. */
const char *ts_cdi_spec_kind(const struct ts_cdi_spec *spec);
/** The validated document (numbers/booleans in string fields already converted), borrowed. */
const struct ts_json *ts_cdi_spec_json(const struct ts_cdi_spec *spec);

/* --- container edits -------------------------------------------------------- */

/** A device node of an injected device, as found on the host (for NUMA locality). */
struct ts_cdi_host_node {
	char *host_path; /* hostPath, defaulted to path (symlinks not resolved) */
	char type;	 /* 'c', 'b', 'u' or 'p' */
	int64_t major, minor;
};

/** One injected device. */
struct ts_cdi_injected_device {
	char *qualified_name;
	char *spec_path;		/* the spec file that resolved it */
	struct ts_cdi_host_node *nodes; /* the device's own deviceNodes (not the spec-level ones) */
	size_t n_nodes;
	/* The engine injected it already (containerd enable_cdi, podman --device): its
	 * own and its spec's spec-level edits hold an env variable, device node, mount
	 * or hook, and every one is in config.json (env by name: a later device may
	 * have overridden the value).  It is not applied again; its nodes are still
	 * listed. */
	bool engine_injected;
	/* The JSON pointer of the request that asked for it
	 * (ts_cdi_requests_collect()); NULL from ts_cdi_inject() alone. */
	char *request_field;
};

/** What ts_cdi_inject_requested() did. */
struct ts_cdi_injection {
	struct ts_cdi_injected_device *devices; /* in request order */
	size_t n_devices;
	char *names;  /* the request's names, sorted and comma-joined; NULL when none */
	bool applied; /* edits were applied: ts_cdi_inject() returned 1 */
};

/** Free an injection result (NULL accepted). @return NULL. */
struct ts_cdi_injection *ts_cdi_injection_free(struct ts_cdi_injection *inj);

/**
 * Apply one set of container edits (a validated "containerEdits" object) to
 * an OCI config tree, in place and without a copy: the building block of
 * ts_cdi_inject(), exposed for tests and `toposhimctl cdi resolve`.
 * Host device nodes are looked up with stat(2) (symlinks followed) when
 * type, or major for b/c/u, is not given.  A node with hostPath != path
 * becomes a bind mount when the runtime will set up the container in a user
 * namespace (config's linux.namespaces has "user", or ts_in_user_namespace()):
 * see the list of differences above.  Every hook gets an env: its own
 * when it has a non-empty one, else [TS_CDI_HOOK_DEFAULT_ENV].
 * @param[in,out] config       OCI config root (an object).
 * @param[in]     edits        the containerEdits object; borrowed.
 * @param[in]     config_name  for messages about config ("config.json").
 * @param[in]     spec_path    for messages about edits (the spec file).
 * @param[in]     edits_ptr    JSON pointer of edits in that file
 *                             ("/devices/0/containerEdits").
 * @param[out]    ret_nodes    when not NULL: the filled device nodes appended
 *                             (*ret_n_nodes grows); caller frees the
 *                             host_path strings and the array.
 * @return 0; -EINVAL (a config member of the wrong type: "<config_name>:
 *         '/process/env': expected array, got string"; host type mismatch:
 *         "<spec_path>: '<edits_ptr>/deviceNodes/0/type': 'b' but host device
 *         '/dev/null' has type 'c'"; "... host path '/x' is not a device
 *         node"); -ENOENT (a plain message) for a host node that does not exist
 *         ("<spec_path>: '<edits_ptr>/deviceNodes/0': host device '/dev/x'
 *         does not exist": no errno text, which podman would take for a
 *         command not found); another -errno of stat(2) ("...: cannot stat
 *         host device '/dev/x'"); -ENOMEM.
 *         On failure config may be half-edited: callers work on a copy.
 */
int ts_cdi_edits_apply(struct ts_json *config, const struct ts_json *edits, const char *config_name,
		       const char *spec_path, const char *edits_ptr,
		       struct ts_cdi_host_node **ret_nodes, size_t *ret_n_nodes,
		       struct ts_error **err);

/* --- registry --------------------------------------------------------------- */

/** Registry options; fill with ts_cdi_options_init() or ts_cdi_options_from_config(). */
struct ts_cdi_options {
	char **spec_dirs;	 /* NULL-terminated, lowest priority first; owned */
	bool require_root_owned; /* refuse spec files/dirs not root-owned or writable by non-root */
	bool env_requests;	 /* also read TOPOSHIM_CDI_DEVICES from the container env */
	/* Persistent index file, NULL = none; owned.  Checked against the (dev, inode, size,
	 * mtime, ctime, mode, owner) of every spec dir and file; when still valid the dirs
	 * are not re-parsed and spec files are read only when a device of theirs is used. */
	char *index_path;
};

/**
 * Defaults: spec_dirs {"/etc/cdi", "/var/run/cdi"}, require_root_owned on,
 * env_requests off, index_path "/run/toposhim/cdi-index" (written only when
 * /run/toposhim exists).
 * @return 0; -ENOMEM.  Release with ts_cdi_options_release().
 */
int ts_cdi_options_init(struct ts_cdi_options *opts, struct ts_error **err);

/**
 * Fill options from the toposhim config file's "cdi" object:
 *   "cdi": {"spec_dirs": ["/etc/cdi", ...], "require_root_owned": true,
 *           "env_requests": false, "index_path": "/run/toposhim/cdi-index"}
 * ("index_path": null turns the index off).
 * Absent members keep the defaults; unknown members are rejected.
 * @param[in]  toposhim_config  the config root (may be NULL: defaults).
 * @param[in]  config_name      for messages, e.g. "/etc/toposhim/config.json".
 * @param[out] ret              filled on success; release with
 *                              ts_cdi_options_release().
 * @return 0; -EINVAL ("<config_name>: '/cdi/spec_dirs/0': not absolute 'x'",
 *         wrong types, unknown key); -ENOMEM.
 */
int ts_cdi_options_from_config(const struct ts_json *toposhim_config, const char *config_name,
			       struct ts_cdi_options *ret, struct ts_error **err);

/** Free what opts owns; leaves it zeroed. */
void ts_cdi_options_release(struct ts_cdi_options *opts);

struct ts_cdi_registry;

/**
 * Scan the spec dirs (non-recursive; names ending exactly ".json"/".yaml";
 * sorted by name; a missing dir skipped) and index every device.  Problems
 * never fail the load: an unreadable or insecure dir, a broken or insecure
 * file, a device defined by two files of the same (winning) dir are recorded
 * and listed by ts_cdi_registry_problems(); the other files stay usable.
 * A later dir wins over an earlier one on the same qualified name.
 * With opts->index_path, a still-valid index replaces the scan (no dir read,
 * no file parsed; spec files are read when a device of theirs is used), a
 * stale one lets the scan skip every file whose stat is unchanged, and a
 * fresh scan rewrites it (not when anything changed in the last 2 seconds,
 * or when the index's dir does not exist).
 * @param[in]  opts  borrowed for the call only.
 * @param[out] ret   the registry; free with ts_cdi_registry_free().
 * @return 0; -ENOMEM (the only failure).
 */
int ts_cdi_registry_load(const struct ts_cdi_options *opts, struct ts_cdi_registry **ret,
			 struct ts_error **err);

/**
 * ts_cdi_registry_load() for a create that asks for these devices only.
 * With a still-valid index the registry holds the named devices that
 * resolve (and their specs) and every problem, nothing else: at 1000 spec
 * files that is a third of a create's instructions saved.  Without one,
 * the whole registry of a scan, as ts_cdi_registry_load().  Lookups and
 * injection of the named devices, ts_cdi_registry_problems() and the
 * "unresolvable" message are the same either way; ts_cdi_registry_devices()
 * lists only the named devices when the index was used.
 * @param[in] names    qualified names, as requested (invalid or repeated
 *                     names are allowed: they do not resolve, or count once);
 *                     borrowed for the call.
 * @param[in] n_names  how many.
 * @return as ts_cdi_registry_load().
 */
int ts_cdi_registry_load_devices(const struct ts_cdi_options *opts, const char *const *names,
				 size_t n_names, struct ts_cdi_registry **ret,
				 struct ts_error **err);

/** Free a registry (NULL accepted). @return NULL. */
struct ts_cdi_registry *ts_cdi_registry_free(struct ts_cdi_registry *reg);

/**
 * Problems found while loading, one line each ("<path>: <message>"), in
 * scan order; log them as warnings.
 * @param[out] ret_msgs  borrowed array of n strings (valid until free).
 * @return n.
 */
size_t ts_cdi_registry_problems(const struct ts_cdi_registry *reg, const char *const **ret_msgs);

/**
 * Look up a device.  A spec known from the index is read here on first use
 * (the registry is logically const).
 * @param[out] ret_spec   the spec that defines it (borrowed); may be NULL.
 * @param[out] ret_index  its index in the spec's /devices; may be NULL.
 * @return true if qualified_name resolves (exists, no conflict, and its spec
 *         file still reads as the index says).
 */
bool ts_cdi_registry_lookup(const struct ts_cdi_registry *reg, const char *qualified_name,
			    const struct ts_cdi_spec **ret_spec, size_t *ret_index);

/**
 * Every resolvable qualified name, sorted (of a registry from
 * ts_cdi_registry_load_devices(): maybe only the names it was asked for).
 * @param[out] ret_names  borrowed array of n names (valid until free).
 * @return n.
 */
size_t ts_cdi_registry_devices(const struct ts_cdi_registry *reg, const char *const **ret_names);

/**
 * Inject the listed devices into an OCI config, all or nothing: the edits are
 * applied to a copy, which replaces *config only when every step succeeded.
 * Spec-level edits are applied once per spec file, before the first device
 * of that spec; the merged edits are applied in CDI order.  Nothing of
 * toposhim's own is written into the config (no annotation): the caller
 * keeps ret->names in the bundle's placement file (state.h).  A device whose edits are all
 * in the config already (the engine injected it, or an earlier create of
 * this bundle did) is skipped (see engine_injected).
 * @param[in]     reg          the registry; NULL counts as empty (so a caller
 *                             may skip loading it when nothing is requested).
 * @param[in,out] config       OCI config root (an object).
 * @param[in]     names        qualified names, duplicates allowed (once).
 * @param[in]     config_name  for messages, e.g. "config.json".
 * @param[out]    ret          what was injected; caller frees with
 *                             ts_cdi_injection_free(); may be NULL.
 * @return 1 when config changed; 0 when there was nothing to do (no names,
 *         or every device's edits are in the config already: injected by the
 *         engine, or a retried create, see ts_cdi_injection_retried(); ret
 *         then still lists the devices); -EINVAL "unresolvable
 *         CDI devices <a>, <b>" listing every unknown or invalid name (the
 *         reference's exact text; errnum 0 so that nothing is appended);
 *         -EINVAL/-errno from ts_cdi_edits_apply(); -errno/-EINVAL when a
 *         spec file known from the index no longer reads, -ESTALE when it
 *         now says something else ("<path>: changed while being read").
 *         On any failure config is untouched.
 */
int ts_cdi_inject(struct ts_cdi_registry *reg, struct ts_json *config, const char *const *names,
		  size_t n_names, const char *config_name, struct ts_cdi_injection **ret,
		  struct ts_error **err);

/**
 * The create path's one call: ts_cdi_requests_collect() then
 * ts_cdi_inject(), each injected device's request_field set.  (To avoid
 * loading the registry for containers that request nothing, call
 * ts_cdi_requests_from_config() first.)
 * @param[in] env_requests  pass opts->env_requests.
 * @return as ts_cdi_inject(), but a device that does not resolve is told
 *         with where it was asked for and where it was looked up (what a
 *         user behind an engine sees is this one line): -EINVAL
 *         "<config_name>: '<request_field of the first>': unresolvable CDI
 *         devices <a>, <b> (no spec file in <dir>, <dir> defines them)",
 *         "defines it" for one, and when spec files were ignored (the
 *         registry's problems) "...; ignored: <problem>" and " (and N
 *         more)", the problem of the first ignored file whose "kind" is
 *         that of the first unresolved name (the file is read again on
 *         this path), else the first problem; for a file not readable by
 *         all, "<path>: not shown (a file not readable by all, mode 0600:
 *         `toposhimctl cdi list` shows why)" instead (the line reaches a
 *         pod's events; a problem may quote the file); "... (<name> is defined by
 *         N spec files of the same dir: <path>, <path>)" when the first
 *         unresolved name is one that several files define (a conflict,
 *         not a missing device); "... (no spec dir)" when reg
 *         is NULL or has none; 0 with an empty *ret when nothing is
 *         requested.  Unlike ts_cdi_inject(), the edits go straight into
 *         config: a failure of an edit (ts_cdi_edits_apply(), e.g. a
 *         device node's host path that is gone) may leave config partly
 *         edited, for a caller that drops it then (the create refuses the
 *         container and writes nothing; a copy of the whole config per
 *         create was 10% of a dev+excl create's instructions).  A request
 *         that does not parse or resolve leaves config untouched.
 */
int ts_cdi_inject_requested(struct ts_cdi_registry *reg, struct ts_json *config,
			    const char *config_name, bool env_requests,
			    struct ts_cdi_injection **ret, struct ts_error **err);

/**
 * Whether the engine injected a device itself (the rule of
 * ts_cdi_injected_device.engine_injected): it resolves in reg, and its
 * edits and its spec's hold at least one entry, every one of them already
 * in config.  For a caller whose injection failed, which must tell such a
 * device (no request of the container's) from the others.
 * @param[in] config  the config as the engine wrote it (not one a failed
 *                    ts_cdi_inject_requested() left partly edited).
 * @return false too when the device does not resolve or its spec file no
 *         longer reads.
 */
bool ts_cdi_engine_injected(const struct ts_cdi_registry *reg, const struct ts_json *config,
			    const char *qualified_name);

/**
 * Whether an injection found the config as an earlier create of this bundle
 * left it: nothing had to be applied and the bundle's record of what
 * toposhim injected names exactly these devices.
 * @param[in] inj       ts_cdi_inject()'s result (NULL: false).
 * @param[in] recorded  the names the bundle's placement file holds (state.h
 *                      ts_state_placement_devices(); NULL: false).
 */
bool ts_cdi_injection_retried(const struct ts_cdi_injection *inj, const char *recorded);

/* --- YAML output -------------------------------------------------------------- */

/**
 * A JSON tree as one YAML 1.1 document in block style (libyaml's emitter,
 * which the layering keeps in this module): members in tree order, empty
 * arrays and objects as [] and {}, numbers as written, strings plain
 * unless a reader would take the plain scalar for something else ("8",
 * "true", "null", "0x10", "": then double-quoted) or plain style cannot
 * hold them, no line folding.  Read back with this module's YAML loader
 * (the CDI spec reader) it gives the same tree.  For `toposhimctl nrt
 * --format yaml`.
 * @param[in]  root  borrowed.
 * @param[out] ret   the text, ending in a newline; caller frees.
 * @return 0; -EINVAL "yaml: cannot write the document: <problem>" (a
 *         string that is not valid UTF-8); -ENOMEM.
 */
int ts_cdi_yaml_serialize(const struct ts_json *root, char **ret, struct ts_error **err);

#endif
