#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Edits an unpacked Linux source tree so that User-Mode Linux's vhost-user
transport (arch/um/drivers/virtio_uml.c) runs virtqueue callbacks in process
context, as the remoteproc hosts of real SoCs do.

Why: virtio_uml calls vring_interrupt() from its SIGIO interrupt handler, so
virtio_rpmsg_bus's rx callback runs in interrupt context. That callback is
written for process context: it takes mutexes (endpoints_lock, the
endpoint's cb_lock) and, for a name service announcement, registers a
device (kobject, sysfs, GFP_KERNEL allocations). When the interrupt lands
while the interrupted task holds one of those locks (a booting kernel
registering drivers holds sysfs and driver-core locks), the handler sleeps
in interrupt context: "BUG: scheduling while atomic" at best, a silent hang
of the whole UML at worst (the console is flushed by interrupts too). On
real hosts the mailbox drivers (imx_rproc, stm32_rproc, ...) hand the vring
interrupt to a workqueue before calling into virtio; this edit does the
same: the handler drains the call pipe and schedules a work item, and the
work item calls vring_interrupt(). Removing a virtqueue cancels its work.

Boot prints one line, "virtio_uml: virtqueue callbacks in process context"
(tests/kernel checks it). The edit is idempotent and fails loudly when the
source does not have the expected shape.

Usage: uml_virtio_edit.py <linux source dir>
"""
import sys

import kernel_edit

MARK = "mdcom: vring callbacks from a workqueue"

INFO_OLD = """struct virtio_uml_vq_info {
	int kick_fd, call_fd;
	char name[32];
	bool suspended;
};
"""
INFO_NEW = """struct virtio_uml_vq_info {
	int kick_fd, call_fd;
	char name[32];
	bool suspended;
	/* mdcom: vring callbacks from a workqueue (tests/kernel/uml_virtio_edit.py) */
	struct virtqueue *vq;
	struct work_struct cb_work;
};
"""

IRQ_OLD = """	do {
		rc = os_read_file(info->call_fd, &n, sizeof(n));
		if (rc == sizeof(n))
			ret |= vring_interrupt(irq, vq);
	} while (rc == sizeof(n) || rc == -EINTR);
	WARN(rc != -EAGAIN, "read returned %d\\n", rc);
	return ret;
}
"""
IRQ_NEW = """	do {
		rc = os_read_file(info->call_fd, &n, sizeof(n));
		if (rc == sizeof(n))
			ret = IRQ_HANDLED;
	} while (rc == sizeof(n) || rc == -EINTR);
	WARN(rc != -EAGAIN, "read returned %d\\n", rc);
	/* the callback may sleep (virtio_rpmsg_bus takes mutexes): process context */
	if (ret == IRQ_HANDLED)
		schedule_work(&info->cb_work);
	return ret;
}

static void vu_vq_cb_work(struct work_struct *work)
{
	struct virtio_uml_vq_info *info = container_of(work, struct virtio_uml_vq_info, cb_work);

	vring_interrupt(0 /* ignored */, info->vq);
}
"""

DEL_OLD = """		um_free_irq(vu_dev->irq, vq);
		os_close_file(info->call_fd);
	}

	if (info->kick_fd >= 0)
		os_close_file(info->kick_fd);

	vring_del_virtqueue(vq);
	kfree(info);
}
"""
DEL_NEW = """		um_free_irq(vu_dev->irq, vq);
		os_close_file(info->call_fd);
	}
	cancel_work_sync(&info->cb_work); /* no callback runs once the vq is gone */

	if (info->kick_fd >= 0)
		os_close_file(info->kick_fd);

	vring_del_virtqueue(vq);
	kfree(info);
}
"""

SETUP_OLD = """	snprintf(info->name, sizeof(info->name), "%s.%d-%s", pdev->name,
		 pdev->id, name);
"""
SETUP_NEW = """	snprintf(info->name, sizeof(info->name), "%s.%d-%s", pdev->name,
		 pdev->id, name);
	INIT_WORK(&info->cb_work, vu_vq_cb_work);
"""

PRIV_OLD = """	vq->priv = info;
	vq->num_max = num;
"""
PRIV_NEW = """	vq->priv = info;
	info->vq = vq;
	vq->num_max = num;
"""

# The error paths of vu_setup_vq free info after the call fd's interrupt was
# requested: a callback scheduled in between must not outlive it.
ERR_OLD = """error_setup:
	if (info->call_fd >= 0) {
		um_free_irq(vu_dev->irq, vq);
		os_close_file(info->call_fd);
	}
"""
ERR_NEW = """error_setup:
	if (info->call_fd >= 0) {
		um_free_irq(vu_dev->irq, vq);
		os_close_file(info->call_fd);
	}
	cancel_work_sync(&info->cb_work);
"""

BANNER_OLD = """static int __init virtio_uml_init(void)
{
"""
BANNER_NEW = """static int __init virtio_uml_init(void)
{
	pr_info("virtio_uml: virtqueue callbacks in process context (workqueue)\\n");
"""


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    kernel_edit.apply("uml_virtio_edit", sys.argv[1], "arch/um/drivers/virtio_uml.c", MARK,
                      [(INFO_OLD, INFO_NEW, "struct virtio_uml_vq_info"),
                       (IRQ_OLD, IRQ_NEW, "vu_interrupt loop"),
                       (DEL_OLD, DEL_NEW, "vu_del_vq teardown"),
                       (SETUP_OLD, SETUP_NEW, "vq name in vu_setup_vq"),
                       (PRIV_OLD, PRIV_NEW, "vq->priv in vu_setup_vq"),
                       (ERR_OLD, ERR_NEW, "error_setup of vu_setup_vq"),
                       (BANNER_OLD, BANNER_NEW, "virtio_uml_init")],
                      "virtqueue callbacks from a workqueue")


if __name__ == "__main__":
    main()
