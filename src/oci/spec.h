/*
 * spec.h - typed access to the OCI runtime-spec fields toposhim reads and edits.
 *
 * Implements, over the config tree of oci/json.h, these fields of OCI
 * runtime-spec v1.1.0/v1.2.0:
 *  - config.md "Annotations" (/annotations: object of string values);
 *  - config.md "Process" (/process/env: array of "NAME=VALUE" strings,
 *    /process/user/uid: uint32);
 *  - config.md "POSIX-platform Hooks" (/hooks/<name>: arrays of
 *    {path, args, env, timeout}; names prestart (deprecated), createRuntime,
 *    createContainer, startContainer, poststart, poststop);
 *  - config-linux.md "Namespaces" (/linux/namespaces: array of {type, path}),
 *    "Control groups" (/linux/cgroupsPath), "CPU" (/linux/resources/cpu/
 *    cpus, mems: strings; shares, period: uint64; quota: int64) and
 *    "Memory" (/linux/resources/memory/limit: int64 bytes, -1 = unlimited).
 *
 * Conventions shared by every function:
 *  - A member that is absent or JSON null counts as unset (Go's encoding/json,
 *    which runc uses, decodes null into a nil pointer/slice/map).  Getters
 *    return 1 when the field is set, 0 when it is not, and write their output
 *    only when they return 1.  Setters create the objects and arrays on the
 *    way (replacing a null) and keep every other member and its position.
 *  - A member of the wrong type is an error, never silently replaced:
 *    -EINVAL with a message that starts with the JSON pointer of the
 *    offending member, e.g. "'/linux/resources': expected object, got array"
 *    (object keys escaped as RFC 6901 tokens: "'/annotations/toposhim.io~1cpus'").
 *    Callers put the file in front with ts_error_prefix(err, "%s", config_path)
 *    to get "/b/config.json: '/linux/resources': expected object, got array".
 *  - config is the root object of a config.json; borrowed.  Returned strings
 *    are borrowed from the tree and valid until it is modified or freed.
 */
#ifndef TS_OCI_SPEC_H
#define TS_OCI_SPEC_H

#include <stdbool.h>
#include <stdint.h>

#include "oci/json.h"
#include "util/error.h"

/* ---- annotations -------------------------------------------------------------------------- */

/**
 * Read annotation key.
 * @param[out] ret_value  the value, borrowed; written only when 1 is returned.
 * @return 1 set; 0 absent (or /annotations absent/null); -EINVAL
 *         "'/annotations': expected object, got <type>" or
 *         "'/annotations/<key>': expected string, got <type>".
 */
int ts_oci_annotation_get(const struct ts_json *config, const char *key, const char **ret_value,
			  struct ts_error **err);

/**
 * Set annotation key to value, replacing an existing one in place (earlier
 * duplicates of the key are dropped) or appending it; creates /annotations.
 * @return 0; -EINVAL "'/annotations': expected object, got <type>", or
 *         "'/annotations': empty key"; -ENOMEM.
 */
int ts_oci_annotation_set(struct ts_json *config, const char *key, const char *value,
			  struct ts_error **err);

/**
 * Remove annotation key (every duplicate of it).
 * @return the number of members removed (0 when absent); -EINVAL
 *         "'/annotations': expected object, got <type>".
 */
int ts_oci_annotation_remove(struct ts_json *config, const char *key, struct ts_error **err);

/* ---- process ------------------------------------------------------------------------------ */

/**
 * Set an environment variable in /process/env: the first entry that starts
 * with "NAME=" is replaced in place, else name_value is appended (later
 * duplicates are left alone, as CDI and runc do).  Creates /process and
 * /process/env as needed.
 * @param[in] name_value  "NAME=VALUE"; NAME is non-empty; VALUE may be empty.
 * @return 0; -EINVAL "'/process/env': invalid entry '<name_value>' (expected
 *         NAME=VALUE)", "'/process': expected object, got <type>",
 *         "'/process/env': expected array, got <type>", or
 *         "'/process/env/<i>': expected string, got <type>"; -ENOMEM.
 */
int ts_oci_env_set(struct ts_json *config, const char *name_value, struct ts_error **err);

/**
 * Read the value of the first /process/env entry named name.
 * @param[out] ret_value  the text after "NAME=", borrowed.
 * @return 1 found; 0 not found; -EINVAL for wrong types (as ts_oci_env_set()).
 */
int ts_oci_env_get(const struct ts_json *config, const char *name, const char **ret_value,
		   struct ts_error **err);

/**
 * Read /process/user/uid (uint32).
 * @return 1 set; 0 absent; -EINVAL wrong type or "'/process/user/uid': not an
 *         integer '<raw>'"; -ERANGE "'/process/user/uid': out of range '<raw>'".
 */
int ts_oci_process_get_uid(const struct ts_json *config, uint32_t *ret_uid, struct ts_error **err);

/* ---- hooks -------------------------------------------------------------------------------- */

/** One hook entry (config.md "POSIX-platform Hooks"). */
struct ts_oci_hook {
	const char *path;	 /* absolute path of the executable; required */
	const char *const *args; /* NULL-terminated argv (args[0] by convention the
				  * program name); NULL = omit "args" */
	const char *const *env;	 /* NULL-terminated "NAME=VALUE" list; NULL = omit "env" */
	int timeout_sec;	 /* seconds, > 0; 0 = omit "timeout" */
};

/** Whether name is a hook list the runtime-spec defines (prestart included). */
bool ts_oci_hook_name_valid(const char *name);

/**
 * Append {"path", "args", "env", "timeout"} (in that order, absent ones
 * omitted) to /hooks/<hook_name>, creating /hooks and the list as needed.
 * @return 0; -EINVAL "unknown hook list '<name>'", "'/hooks/<name>': path not
 *         absolute '<path>'", "'/hooks/<name>': timeout must be positive '<n>'",
 *         "'/hooks': expected object, got <type>", "'/hooks/<name>': expected
 *         array, got <type>"; -ENOMEM.
 */
int ts_oci_hook_append(struct ts_json *config, const char *hook_name,
		       const struct ts_oci_hook *hook, struct ts_error **err);

/* ---- linux -------------------------------------------------------------------------------- */

/**
 * Read /linux/cgroupsPath.
 * @return 1 set (ret borrowed); 0 absent; -EINVAL wrong type.
 */
int ts_oci_linux_get_cgroups_path(const struct ts_json *config, const char **ret,
				  struct ts_error **err);

/**
 * Whether /linux/namespaces has an entry of type "user".
 * @return 1 yes; 0 no (or no list); -EINVAL "'/linux/namespaces': expected
 *         array, got <type>", "'/linux/namespaces/<i>': expected object, got
 *         <type>" or "'/linux/namespaces/<i>/type': expected string, got <type>".
 */
int ts_oci_linux_has_user_namespace(const struct ts_json *config, struct ts_error **err);

/*
 * /linux/resources/cpu/{cpus,mems,shares,quota,period} and
 * /linux/resources/memory/limit.  Getters return 1 set, 0 absent/null,
 * -EINVAL for a wrong type ("'/linux/resources/cpu/shares': expected number,
 * got string") or a number that is not an integer ("...: not an integer
 * '1.5'"), -ERANGE when it does not fit the field's C type ("...: out of
 * range '-1'").  Setters return 0, -EINVAL when a container on the way has
 * another type, -ENOMEM; they replace the member in place or append it.
 * cpus_str/mems_str are cpuset list strings ("0-3,8"), not validated here
 * (src/topology owns that syntax); NULL is refused with -EINVAL.
 */
int ts_oci_cpu_get_cpus(const struct ts_json *config, const char **ret_cpus_str,
			struct ts_error **err);
int ts_oci_cpu_set_cpus(struct ts_json *config, const char *cpus_str, struct ts_error **err);
int ts_oci_cpu_get_mems(const struct ts_json *config, const char **ret_mems_str,
			struct ts_error **err);
int ts_oci_cpu_set_mems(struct ts_json *config, const char *mems_str, struct ts_error **err);
/* CPU shares: relative weight (cgroup v1 cpu.shares; runc maps it to v2 cpu.weight). */
int ts_oci_cpu_get_shares(const struct ts_json *config, uint64_t *ret, struct ts_error **err);
int ts_oci_cpu_set_shares(struct ts_json *config, uint64_t shares, struct ts_error **err);
/* CFS quota in microseconds per period; -1 means unlimited. */
int ts_oci_cpu_get_quota(const struct ts_json *config, int64_t *ret_usec, struct ts_error **err);
int ts_oci_cpu_set_quota(struct ts_json *config, int64_t quota_usec, struct ts_error **err);
/* CFS period in microseconds. */
int ts_oci_cpu_get_period(const struct ts_json *config, uint64_t *ret_usec, struct ts_error **err);
int ts_oci_cpu_set_period(struct ts_json *config, uint64_t period_usec, struct ts_error **err);
/* Memory limit in bytes; -1 means unlimited. */
int ts_oci_memory_get_limit(const struct ts_json *config, int64_t *ret_bytes,
			    struct ts_error **err);
int ts_oci_memory_set_limit(struct ts_json *config, int64_t limit_bytes, struct ts_error **err);

#endif
