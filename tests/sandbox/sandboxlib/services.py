"""What runs beside the nodes: the local registry with the stand-in images, the
metadata server and authenticating registry front the nodes reach, and the
Compute API emulator that serves the nodes to the gce_gpu inventory plugin.
Importing this module plugs them into the sandbox life cycle.
"""

from . import cluster, common, emulator, guest, registry, standins


def _after_up(plan):
    registry.start_host()
    standins.publish()
    plan["registry"] = {"host": registry.host_address(),
                        "nodes": "%s:%d (as %s, token required)" % (plan["registry_host"], registry.NODE_PORT,
                                                                    cluster.REGISTRY_ALIAS)}
    guest.start(plan)
    emulator.start(plan)


def _before_down(name, plan):
    emulator.stop(name)
    guest.stop(name)


def _after_down_all(everything):
    """The shared registry goes when the last sandbox goes."""
    if everything or not common.sandbox_names():
        if registry.stop_host():
            print("sandbox registry on %s stopped (its storage stays in %s)"
                  % (registry.host_address(), registry.STORAGE))


def _images():
    for spec in standins.publish():
        print("stand-in %s: %s" % (spec["name"], ", ".join(spec["images"])))


cluster.AFTER_UP.append(_after_up)
cluster.BEFORE_DOWN.append(_before_down)
cluster.AFTER_DOWN_ALL.append(_after_down_all)
cluster.IMAGE_HOOKS.append(registry.start_host)
cluster.IMAGE_HOOKS.append(_images)
