/*
 * role.h - which container of a pod a config.json is, and the requests
 * the pod's annotations make for it.
 *
 * On Kubernetes the pod's annotations are all a user can set, and the
 * engine copies them into every container of the pod: the sandbox (pause,
 * infra) container as well as each app container.  This module tells them
 * apart from what the engine records in /annotations (OCI runtime-spec
 * config.md "Annotations"), and scopes the pod's requests to one container:
 *
 * Role (the first rule that matches):
 *  - "io.kubernetes.cri.container-type" (containerd's CRI): "sandbox" or
 *    "container";
 *  - "io.kubernetes.cri-o.ContainerType" (CRI-O, and podman for the app
 *    containers of a pod): "sandbox" or "container";
 *  - podman's pod infra container, which carries neither: annotation
 *    "io.container.manager" is "libpod" and /process/args is podman's
 *    infra command ["/catatonit", "-P"] (podman 4) or ["/pause"] (an
 *    infra image of Kubernetes' pause);
 *  - anything else is an app container.
 * Name (app containers only): "io.kubernetes.cri.container-name"
 * (containerd), else "io.kubernetes.cri-o.ContainerName" (CRI-O), whose
 * kubelet form "k8s_<name>_<pod>_<namespace>_<uid>_<attempt>" gives
 * <name>.  A name must be a DNS label (RFC 1123: lowercase letters, digits
 * and '-', at most 63, not starting or ending with '-'), as Kubernetes
 * container names are; anything else counts as no name.
 *
 * Requests (toposhim.io/<key>, key one of TS_OCI_REQUEST_KEYS):
 *  - a sandbox takes none: the pod's requests are for its app containers;
 *  - an app container named N takes "toposhim.io/<key>.N" when present,
 *    else the unscoped "toposhim.io/<key>";
 *  - an app container without a name takes the unscoped form only.
 * A scoped key naming another container is ignored by this one; whether it
 * names any container of the pod cannot be told from one config.json.
 *
 * Returned strings are borrowed from the tree unless stated otherwise.
 */
#ifndef TS_OCI_ROLE_H
#define TS_OCI_ROLE_H

#include <stdbool.h>
#include <stddef.h>

#include "oci/json.h"
#include "util/error.h"

enum ts_oci_role {
	TS_OCI_ROLE_CONTAINER = 0, /* an app (or init) container, or no pod at all */
	TS_OCI_ROLE_SANDBOX = 1,   /* the pod's sandbox / infra container */
};

#define TS_OCI_ANNOTATION_CRI_TYPE "io.kubernetes.cri.container-type"
#define TS_OCI_ANNOTATION_CRI_NAME "io.kubernetes.cri.container-name"
#define TS_OCI_ANNOTATION_CRIO_TYPE "io.kubernetes.cri-o.ContainerType"
#define TS_OCI_ANNOTATION_CRIO_NAME "io.kubernetes.cri-o.ContainerName"

/* The toposhim.io/ keys that are per-container requests, NULL-terminated:
 * class, cpus, numa, memory-tier and cdi (scoped CDI devices: a
 * comma-separated list of qualified device names, like cdi.k8s.io/<key>). */
extern const char *const TS_OCI_REQUEST_KEYS[];

struct ts_oci_container {
	enum ts_oci_role role;
	const char *role_from; /* the annotation (or "/process/args") that made it a
				* sandbox or a pod's container; NULL: no engine record */
	char name[64];	       /* the container's name in its pod; "" when none */
	const char *name_from; /* the annotation the name came from; NULL when none */
};

/**
 * Tell the role and name of the container a config.json describes.
 * Cannot fail: a malformed or missing engine record means an app container
 * without a name.
 * @param[in]  config  config.json tree; borrowed.
 * @param[out] ret     filled; its strings borrow config (name is copied).
 */
void ts_oci_container_identify(const struct ts_json *config, struct ts_oci_container *ret);

/** Whether s is a DNS label (RFC 1123), the form of a Kubernetes container name. */
bool ts_oci_dns_label(const char *s);

/**
 * Whether the len bytes at s are a DNS subdomain (RFC 1123): labels of
 * lower case letters, digits and '-', each starting and ending with a
 * letter or digit, joined by '.', 253 bytes at most.  The form of a
 * Kubernetes node's (and most objects') name, and of a CDI annotation
 * key's prefix.
 */
bool ts_oci_dns_subdomain(const char *s, size_t len);

/**
 * The value of request key ("toposhim.io/class", ...) for container c.
 * @param[in]  config     config.json tree; borrowed.
 * @param[in]  c          from ts_oci_container_identify(); borrowed.
 * @param[in]  key        the unscoped annotation key.
 * @param[out] ret_value  borrowed; written only when 1 is returned.
 * @param[out] ret_field  the JSON pointer of the annotation used
 *                        ("/annotations/toposhim.io~1class.worker"); the
 *                        caller frees it; written only when 1 is returned;
 *                        may be NULL.
 * @return 1 found; 0 none for this container (always for a sandbox);
 *         -EINVAL "'/annotations/<key>': expected string, got <type>";
 *         -ENOMEM.
 */
int ts_oci_request_get(const struct ts_json *config, const struct ts_oci_container *c,
		       const char *key, const char **ret_value, char **ret_field,
		       struct ts_error **err);

/**
 * Check the scoped request annotations ("toposhim.io/<key>.<name>", key of
 * TS_OCI_REQUEST_KEYS) of a config.json: each <name> must be a DNS label.
 * @param[out] ret_others  when not NULL, a NULL-terminated array of the
 *                         scoped keys that name a container other than c
 *                         (borrowed strings; the caller frees the array).
 * @return the number of such keys; -EINVAL "'/annotations/<escaped key>':
 *         invalid container name '<name>' (a DNS label: lowercase letters,
 *         digits and '-')"; -ENOMEM.
 */
int ts_oci_request_check(const struct ts_json *config, const struct ts_oci_container *c,
			 const char ***ret_others, struct ts_error **err);

/**
 * The annotations under "toposhim.io/" that are no request key: neither
 * "toposhim.io/<key>" nor "toposhim.io/<key>.<name>" for a key of
 * TS_OCI_REQUEST_KEYS (a misspelt "toposhim.io/clas", a key of a newer
 * toposhim).  They are ignored; the create names them in a warning.
 * @param[out] ret  NULL-terminated array of the keys in document order
 *                  (borrowed strings; the caller frees the array).
 * @return the number of such keys; -ENOMEM.
 */
int ts_oci_request_unknown(const struct ts_json *config, const char ***ret);

#endif
