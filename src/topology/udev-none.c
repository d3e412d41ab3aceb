/*
 * udev-none.c - the five libudev calls of hwloc's Linux backend, for the
 * static core only (configure --enable-static-core; Makefile: linked into
 * toposhim-core, never into libtoposhim).
 *
 * Debian ships libhwloc.a but no static libudev.  hwloc asks udev only for
 * the properties of OS devices (a disk's serial number, vendor and model)
 * and goes on without them when udev_new() returns NULL, as it does on a
 * host without udev; toposhim reads no such property (device locality is
 * sysfs's numa_node and local_cpulist, topology/devloc.c).  So the static
 * core links these instead of libudev: hwloc sees "no udev".  Signatures as
 * libudev.h (systemd 252) declares them.
 */
#include <stddef.h>

struct udev;
struct udev_device;

struct udev *udev_new(void);
struct udev *udev_unref(struct udev *udev);
struct udev_device *udev_device_new_from_subsystem_sysname(struct udev *udev, const char *subsystem,
							   const char *sysname);
struct udev_device *udev_device_unref(struct udev_device *dev);
const char *udev_device_get_property_value(struct udev_device *dev, const char *key);

/* No udev: hwloc leaves OS devices without their udev properties. */
struct udev *udev_new(void)
{
	return NULL;
}

struct udev *udev_unref(struct udev *udev)
{
	(void)udev;
	return NULL;
}

struct udev_device *udev_device_new_from_subsystem_sysname(struct udev *udev, const char *subsystem,
							   const char *sysname)
{
	(void)udev;
	(void)subsystem;
	(void)sysname;
	return NULL;
}

struct udev_device *udev_device_unref(struct udev_device *dev)
{
	(void)dev;
	return NULL;
}

const char *udev_device_get_property_value(struct udev_device *dev, const char *key)
{
	(void)dev;
	(void)key;
	return NULL;
}
