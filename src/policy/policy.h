/*
 * policy.h - who may ask toposhim for what: the operator's policy on the
 * requests a container's annotations carry.
 *
 * Annotations are written by whoever creates the container; on Kubernetes
 * that is anyone who may create a pod in a namespace (pod annotations reach
 * every container of the pod).  Some requests take from others what the
 * operator did not give: exclusive CPUs, a whole NUMA node, the reserved
 * CPUs, a memory tier, a device.  These are the privileged requests, each
 * refused unless a rule allows it (issue 10, finding 4):
 *
 *   class      a class whose pool is "exclusive": allowed by the kubelet's
 *              rule (an integer CPU limit equal to the request — quota a
 *              multiple of the period, shares = limit x 1024 — and at most
 *              that many CPUs) or by a grant; a count above the container's
 *              own CPU limit is refused even with a grant.  A class whose
 *              pool is "reserved" (the system's CPUs): only by a grant.
 *              Shared-pool classes are never privileged.
 *   numa       "exclusive" (a whole NUMA node): only by a grant.
 *   tier       any memory tier but "dram": only by a grant.
 *   devices    each CDI device a cdi.k8s.io annotation asks for: only when
 *              a grant's pattern matches its qualified name.  Devices the
 *              engine injected itself (kubelet's device plugins and DRA)
 *              are not requests: the engine decided.
 *
 * The subject of a container is its Kubernetes namespace, from the
 * annotation the engine sets from kubelet's sandbox metadata:
 * io.kubernetes.cri.sandbox-namespace (containerd's CRI, 1.5 and later)
 * or io.kubernetes.pod.namespace (CRI-O); else "unscoped" (podman, ctr,
 * Docker, shells).  containerd writes its own annotations after the pod
 * annotations it passes through, so its key cannot be forged by a pod; a
 * pod.namespace beside it that names another namespace can only have come
 * from a pod and is refused (an operator must still never let pod
 * annotations pass io.kubernetes.* keys through: docs/security.md).
 *
 * Config (the toposhim config file, root object):
 *   "policy": {
 *     "unscoped":   GRANT,
 *     "namespaces": {"<name or fnmatch(3) pattern>": GRANT, ...}
 *   }
 *   GRANT: {"classes": ["critical", ...], "numa": ["exclusive"],
 *           "memory_tiers": ["hbm", ...], "devices": ["vendor.com/gpu=*", ...]}
 * Every list member is an fnmatch(3) pattern ("*" grants every value);
 * devices match "vendor.com/class=name".  A namespace takes the grant of the first
 * pattern that matches it, in the file's order (an exact name first when
 * both match).  Without "policy" nothing is granted: only the kubelet's
 * rule gives exclusive CPUs.
 *
 * Ownership: a struct ts_policy borrows the config tree it was parsed
 * from; keep the tree alive.  Nothing here prints or keeps global state.
 */
#ifndef TS_POLICY_POLICY_H
#define TS_POLICY_POLICY_H

#include <stdbool.h>
#include <stddef.h>

#include "oci/json.h"
#include "util/error.h"

/* Annotations naming a container's Kubernetes namespace: containerd's
 * CRI, and CRI-O (kubelet's label, which CRI-O copies). */
#define TS_POLICY_CRI_NAMESPACE_ANNOTATION "io.kubernetes.cri.sandbox-namespace"
#define TS_POLICY_NAMESPACE_ANNOTATION "io.kubernetes.pod.namespace"

/* The pool a class draws from, as the policy sees it. */
enum ts_policy_pool {
	TS_POLICY_POOL_SHARED,
	TS_POLICY_POOL_EXCLUSIVE,
	TS_POLICY_POOL_RESERVED,
};

struct ts_policy {
	const struct ts_json *policy; /* the config's "policy" object, or NULL; borrowed */
	const char *config_path;      /* for messages; borrowed */
};

/* What one container asks for, from its annotations and resources. */
struct ts_policy_request {
	const char *config_name;    /* its config.json, for messages */
	const char *namespace;	    /* NULL: unscoped */
	const char *class_name;	    /* requested by toposhim.io/class; NULL: derived, not asked */
	enum ts_policy_pool pool;   /* of class_name */
	unsigned cpus;		    /* exclusive CPUs the placement will give (0: none) */
	bool cpus_annotated;	    /* cpus came from toposhim.io/cpus */
	unsigned cpu_limit;	    /* CPUs of quota/period rounded up; 0: no limit */
	bool guaranteed;	    /* integer limit equal to the request (kubelet's rule) */
	const char *numa;	    /* toposhim.io/numa, NULL when absent */
	const char *memory_tier;    /* toposhim.io/memory-tier, NULL when absent */
	const char *const *devices; /* qualified names asked by annotation */
	size_t n_devices;
	/* Where each request came from, as JSON pointers for messages
	 * ("/annotations/toposhim.io~1class.worker"); NULL: the pod-wide
	 * annotation (toposhim.io/class, /cpus, /numa, /memory-tier; for a
	 * device "/annotations"). */
	const char *class_field, *cpus_field, *numa_field, *tier_field;
	const char *const *device_fields; /* parallel to devices; NULL or NULL members */
};

/**
 * Read and check the config's "policy".
 * @param[in]  config       the config root; borrowed, must outlive ret.
 * @param[in]  config_path  its file, for messages; borrowed likewise.
 * @param[out] ret          filled.
 * @return 0; -EINVAL "<file>: '/policy': expected object, got <type>",
 *         "<file>: '/policy/<key>': unknown key", "<file>:
 *         '/policy/namespaces/<ns>/<key>': unknown key" (keys: classes, numa,
 *         memory_tiers, devices), "...: expected array of strings, got <type>",
 *         "...: invalid numa mode '<v>'", "...: invalid memory tier '<v>'".
 */
int ts_policy_parse(const struct ts_json *config, const char *config_path, struct ts_policy *ret,
		    struct ts_error **err);

/**
 * Whether the policy allows what a container asks for.
 * @return 0 when allowed; -EINVAL (no errno text) with one line naming the request, the
 *         subject and the rule, e.g.
 *         "config.json: '/annotations/toposhim.io~1class': class 'critical'
 *         (exclusive cpus) is not allowed for namespace 'team-a': it needs
 *         an integer cpu limit equal to its request (the kubelet's rule), or
 *         the class in '/policy/namespaces/<pattern>/classes' of <file>";
 *         "...: '/annotations/toposhim.io~1cpus': 4 exclusive cpus are more
 *         than the container's cpu limit of 2"; likewise for numa, tier and
 *         "'/annotations/cdi.k8s.io~1<key>': cdi device 'v.com/c=x' is not
 *         allowed ..."; each naming the annotation the request came from
 *         (class_field and the others: "toposhim.io~1class.worker" for a
 *         scoped one).
 */
int ts_policy_check(const struct ts_policy *pol, const struct ts_policy_request *req,
		    struct ts_error **err);

/**
 * The Kubernetes namespace of a container: its annotation
 * io.kubernetes.cri.sandbox-namespace (containerd), else
 * io.kubernetes.pod.namespace (CRI-O).
 * @param[in]  config       OCI config root; borrowed.
 * @param[in]  config_name  for messages, e.g. "/b/config.json".
 * @param[out] ret_ns       the namespace (borrowed from config), NULL when
 *                          neither annotation is set (an unscoped container).
 * @return 0; -EINVAL (no errno text) when either annotation is not a
 *         non-empty string ("<config_name>: '/annotations/<key>': expected
 *         string, got <type>" / "...: empty namespace"), or when both are
 *         set and differ ("<config_name>:
 *         '/annotations/io.kubernetes.pod.namespace': 'kube-system' is not
 *         the pod's namespace 'team-a' (io.kubernetes.cri.sandbox-namespace,
 *         set by containerd's CRI)"): a pod annotation passed through
 *         cannot choose another namespace's grant.
 */
int ts_policy_namespace(const struct ts_json *config, const char *config_name, const char **ret_ns,
			struct ts_error **err);

#endif
