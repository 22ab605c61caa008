#include "config/services.h"

#include "util/strings.h"

namespace pai::config {

namespace {

const std::vector<std::string> kServices = {"cluster",
                                            "rest-server",
                                            "webportal",
                                            "hivedscheduler",
                                            "authentication",
                                            "docker-cache",
                                            "pylon",
                                            "alert-manager",
                                            "prometheus",
                                            "grafana",
                                            "node-exporter",
                                            "job-exporter",
                                            "cleaner",
                                            "log-manager",
                                            "storage-manager",
                                            "internal-storage",
                                            "postgresql",
                                            "frameworkcontroller",
                                            "device-plugin",
                                            "database-controller",
                                            "marketplace-db",
                                            "marketplace-restserver",
                                            "marketplace-webportal",
                                            "fluentd",
                                            "k8s-dashboard",
                                            "k8s-job-exit-spec",
                                            "prometheus-pushgateway",
                                            "dshuttle",
                                            "openpai-runtime",
                                            "azure-rdma",
                                            "watchdog",
                                            "utilities"};

void check_port(const Node* parent, const char* key, const std::string& where, Context& ctx) {
  const Node* n = parent ? parent->get(key) : nullptr;
  if (!n) return;
  std::optional<int64_t> v;
  if (n->is_scalar()) v = n->as_int() ? n->as_int() : util::parse_int(n->scalar());
  if (!v || *v < 1 || *v > 65535)
    ctx.error("S002", ctx.at(n),
              where + "." + key + " must be a port number 1-65535, found " + n->describe(),
              "pick a free TCP port; the OpenPAI defaults are in docs/check-config.md");
}

}  // namespace

ServicesConfig load_services_config(const Node* root, Context& ctx) {
  ServicesConfig s;
  s.file = ctx.file();
  if (!ctx.is_mapping(root, "services-configuration.yaml")) return s;
  ctx.unknown_keys(root, kServices, "services-configuration.yaml");

  if (const Node* cluster = root->get("cluster"); cluster && ctx.is_mapping(cluster, "cluster")) {
    if (const Node* common = cluster->get("common");
        common && ctx.is_mapping(common, "cluster.common")) {
      if (const Node* id = common->get("cluster-id")) {
        if (auto v = ctx.string_value(id, "cluster.common.cluster-id")) {
          s.cluster_id = *v;
          if (!util::is_dns1123_label(*v))
            ctx.error("S004", ctx.at(id),
                      "cluster-id \"" + *v + "\" is not a valid Kubernetes name",
                      "use lower-case letters, digits and '-' (at most 63); OpenPAI stores it in a "
                      "configmap");
        }
      }
      if (const Node* d = common->get("docker-data-root"))
        if (auto v = ctx.string_value(d, "cluster.common.docker-data-root"))
          s.docker_data_root = *v;
    }
  }
  if (const Node* rs = root->get("rest-server"); rs && ctx.is_mapping(rs, "rest-server")) {
    check_port(rs, "server-port", "rest-server", ctx);
    const Node* ps = rs->get("schedule-port-start");
    const Node* pe = rs->get("schedule-port-end");
    check_port(rs, "schedule-port-start", "rest-server", ctx);
    check_port(rs, "schedule-port-end", "rest-server", ctx);
    if (ps && pe && ps->as_int() && pe->as_int() && *ps->as_int() >= *pe->as_int())
      ctx.error("S003", ctx.at(ps),
                "rest-server schedule-port-start (" + ps->scalar() +
                    ") must be below schedule-port-end (" + pe->scalar() + ")",
                "the defaults are 15000 and 40000");
  }
  for (const char* svc : {"webportal", "pylon", "grafana", "prometheus", "node-exporter",
                          "job-exporter", "log-manager", "alert-manager"}) {
    const Node* n = root->get(svc);
    if (!n || !n->is_mapping()) continue;
    check_port(n, "server-port", svc, ctx);
    check_port(n, "port", svc, ctx);
  }

  const Node* hs = root->get("hivedscheduler");
  if (hs && ctx.is_mapping(hs, "hivedscheduler")) {
    const Node* cfg = hs->get("config");
    if (cfg && cfg->kind() != yaml::NodeKind::Null) {
      if (!cfg->is_scalar()) {
        ctx.error(
            "S001", ctx.at(cfg),
            "hivedscheduler.config must be a YAML string holding the HiveD config, found " +
                cfg->describe(),
            "write it as a block string: 'config: |' followed by the HiveD config indented below");
      } else if (!util::trim(cfg->scalar()).empty()) {
        s.has_hived = true;
        // Parse the embedded document; map its positions back to this file.
        yaml::Stream inner = yaml::load(cfg->scalar());
        const Node* scalar = cfg;
        Context inner_ctx(ctx.file(), ctx.out(), [scalar, &ctx](Mark m) {
          return ctx.map(m.line ? scalar->inner_mark(m.line, m.column) : scalar->mark());
        });
        if (const Node* doc = single_document(inner, inner_ctx, "hivedscheduler.config")) {
          s.hived = load_hived_config(doc, inner_ctx);
        } else {
          s.hived.valid = false;
        }
        s.hived.embedded = true;
        s.hived.file = ctx.file();
        // `inner` dies here; the config holds copies only.
      }
    }
  }
  return s;
}

}  // namespace pai::config
