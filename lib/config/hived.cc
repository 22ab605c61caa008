#include "config/hived.h"

#include "util/strings.h"

namespace pai::config {

const SkuTypeSpec* HivedConfig::find_sku_type(std::string_view name) const {
  for (const auto& s : sku_types)
    if (s.name == name) return &s;
  return nullptr;
}

const CellTypeSpec* HivedConfig::find_cell_type(std::string_view name) const {
  for (const auto& c : cell_types)
    if (c.name == name) return &c;
  return nullptr;
}

namespace {

const std::vector<std::string> kHivedTopKeys = {"kubeApiServerAddress",
                                                "kubeConfigFilePath",
                                                "webServerAddress",
                                                "forcePodBindThreshold",
                                                "waitingPodSchedulingBlockMilliSec",
                                                "physicalCluster",
                                                "virtualClusters",
                                                "quotaExcludeVCs"};
const std::vector<std::string> kPhysicalClusterKeys = {"skuTypes", "cellTypes", "physicalCells",
                                                       "gpuTypes"};
const std::vector<std::string> kCellTypeKeys = {"childCellType", "childCellNumber", "isNodeLevel"};
const std::vector<std::string> kPhysicalCellKeys = {"cellType", "cellAddress", "pinnedCellId",
                                                    "cellChildren"};
const std::vector<std::string> kVcKeys = {"virtualCells", "pinnedCells"};
const std::vector<std::string> kVirtualCellKeys = {"cellType", "cellNumber"};

// HiveD reads string fields with Go's YAML decoder, which accepts any scalar.
std::optional<std::string> scalar_text(const Node* n, const std::string& what, Context& ctx) {
  if (n && n->is_scalar() && !n->is_null()) return n->scalar();
  ctx.error("F005", ctx.at(n), what + " must be a string, found " + (n ? n->describe() : "nothing"),
            "write a single value here");
  return std::nullopt;
}

void load_physical_cell(const Node* n, const std::string& where, PhysicalCellSpec& out,
                        Context& ctx, int depth) {
  out.mark = ctx.at(n);
  if (n->is_null()) return;  // "- " or "- null" alone: every field inferred
  if (!ctx.is_mapping(n, where)) return;
  ctx.unknown_keys(n, kPhysicalCellKeys, where);
  if (const Node* t = n->get("cellType")) {
    out.type_mark = ctx.at(t);
    if (auto v = scalar_text(t, where + ".cellType", ctx)) out.cell_type = *v;
  }
  if (const Node* a = n->get("cellAddress")) {
    out.address_mark = ctx.at(a);
    if (auto v = scalar_text(a, where + ".cellAddress", ctx)) {
      out.cell_address = *v;
      if (v->find('/') != std::string::npos)
        ctx.error(
            "F005", ctx.at(a),
            where + ".cellAddress \"" + *v + "\" contains '/', which HiveD uses to join addresses",
            "write only this cell's own part of the address");
    }
  }
  if (const Node* p = n->get("pinnedCellId")) {
    out.pinned_mark = ctx.at(p);
    if (auto v = scalar_text(p, where + ".pinnedCellId", ctx)) out.pinned_cell_id = *v;
  }
  if (const Node* ch = n->get("cellChildren")) {
    if (ch->is_null()) return;  // "cellChildren:" or "cellChildren: null", as HiveD reads it
    if (!ctx.is_sequence(ch, where + ".cellChildren")) return;
    out.has_children = true;
    out.children.resize(ch->items().size());
    size_t i = 0;
    for (const Node* c : ch->items()) {
      load_physical_cell(c, where + ".cellChildren[" + std::to_string(i) + "]", out.children[i],
                         ctx, depth + 1);
      ++i;
    }
  }
}

}  // namespace

HivedConfig load_hived_config(const Node* root, Context& ctx) {
  HivedConfig cfg;
  cfg.file = ctx.file();
  if (!ctx.is_mapping(root, "the HiveD config")) {
    cfg.valid = false;
    return cfg;
  }
  ctx.unknown_keys(root, kHivedTopKeys, "the HiveD config");

  const Node* pc = ctx.required(root, "physicalCluster", "the HiveD config");
  if (pc && ctx.is_mapping(pc, "physicalCluster")) {
    cfg.physical_cluster_mark = ctx.key_at(root, "physicalCluster");
    ctx.unknown_keys(pc, kPhysicalClusterKeys, "physicalCluster");

    const Node* skus = pc->get("skuTypes");
    if (!skus) {
      if (const Node* g = pc->get("gpuTypes")) {
        ctx.warning("H020", ctx.key_at(pc, "gpuTypes"), "gpuTypes is the old name of skuTypes",
                    "rename it to skuTypes; current OpenPAI reads only skuTypes");
        skus = g;
      }
    }
    if (skus && ctx.is_mapping(skus, "physicalCluster.skuTypes")) {
      cfg.has_sku_types = true;
      for (const auto& p : skus->pairs()) {
        SkuTypeSpec s;
        s.name = p.key->scalar();
        s.mark = ctx.at(p.key);
        std::string where = "skuTypes." + s.name;
        if (ctx.is_mapping(p.value, where)) {
          ctx.unknown_keys(p.value, {"gpu", "cpu", "memory"}, where);
          if (const Node* g = p.value->get("gpu"))
            if (auto v = ctx.number_value(g, where + ".gpu")) {
              s.gpu = *v;
              if (*v < 0)
                ctx.error("H022", ctx.at(g), where + ".gpu must not be negative",
                          "use 1 for a GPU leaf, 0 for a CPU leaf");
            }
          if (const Node* c = p.value->get("cpu"))
            if (auto v = ctx.number_value(c, where + ".cpu")) {
              s.cpu = *v;
              s.cpu_mark = ctx.at(c);
              if (*v <= 0)
                ctx.error("H022", ctx.at(c), where + ".cpu must be positive, found " + c->scalar(),
                          "cpu is the number of CPUs a pod gets per leaf cell");
            }
          if (const Node* m = p.value->get("memory")) {
            s.memory_mark = ctx.at(m);
            if (m->is_scalar() && !m->is_null()) {
              auto q = util::parse_quantity(m->scalar());
              if (!q || *q <= 0)
                ctx.error("H022", ctx.at(m),
                          where + ".memory \"" + m->scalar() + "\" is not a memory quantity",
                          "write it like 54Gi or 16384Mi");
              else
                s.memory_bytes = *q;
            } else {
              ctx.error("F005", ctx.at(m),
                        where + ".memory must be a quantity such as 54Gi, found " + m->describe(),
                        "memory is what a pod gets per leaf cell, e.g. 54Gi");
            }
          }
        }
        cfg.sku_types.push_back(std::move(s));
      }
    }

    const Node* cts = ctx.required(pc, "cellTypes", "physicalCluster");
    if (cts && ctx.is_mapping(cts, "physicalCluster.cellTypes")) {
      for (const auto& p : cts->pairs()) {
        CellTypeSpec t;
        t.name = p.key->scalar();
        t.mark = ctx.at(p.key);
        std::string where = "cellTypes." + t.name;
        if (ctx.is_mapping(p.value, where)) {
          ctx.unknown_keys(p.value, kCellTypeKeys, where);
          if (const Node* c = ctx.required(p.value, "childCellType", where)) {
            t.child_type_mark = ctx.at(c);
            if (auto v = scalar_text(c, where + ".childCellType", ctx)) t.child_cell_type = *v;
          }
          if (const Node* c = ctx.required(p.value, "childCellNumber", where)) {
            t.child_number_mark = ctx.at(c);
            if (auto v = ctx.int_value(c, where + ".childCellNumber")) {
              t.child_cell_number = *v;
              if (*v <= 0 || *v > 1'000'000)
                ctx.error("H016", ctx.at(c),
                          where + ".childCellNumber must be between 1 and 1000000, found " +
                              std::to_string(*v),
                          "childCellNumber is how many " + t.child_cell_type + " cells one " +
                              t.name + " holds");
            }
          }
          if (const Node* c = p.value->get("isNodeLevel"))
            if (auto v = ctx.bool_value(c, where + ".isNodeLevel")) t.is_node_level = *v;
        }
        cfg.cell_types.push_back(std::move(t));
      }
    }

    const Node* cells = ctx.required(pc, "physicalCells", "physicalCluster");
    if (cells && !cells->is_null() && ctx.is_sequence(cells, "physicalCluster.physicalCells")) {
      cfg.physical_cells.resize(cells->items().size());
      size_t i = 0;
      for (const Node* c : cells->items()) {
        load_physical_cell(c, "physicalCells[" + std::to_string(i) + "]", cfg.physical_cells[i],
                           ctx, 0);
        if (cfg.physical_cells[i].cell_type.empty() && c->is_mapping())
          ctx.error(
              "F007", ctx.at(c),
              "physicalCells[" + std::to_string(i) + "] is missing the required key \"cellType\"",
              "a top-level physical cell names its chain's top cell type");
        ++i;
      }
    }
  }

  if (const Node* vcs = root->get("virtualClusters")) {
    cfg.has_virtual_clusters = true;
    cfg.virtual_clusters_mark = ctx.key_at(root, "virtualClusters");
    if (!vcs->is_null() && ctx.is_mapping(vcs, "virtualClusters")) {
      for (const auto& p : vcs->pairs()) {
        VirtualClusterSpec vc;
        vc.name = p.key->scalar();
        vc.mark = ctx.at(p.key);
        std::string where = "virtualClusters." + vc.name;
        if (!p.value->is_null() && ctx.is_mapping(p.value, where)) {
          ctx.unknown_keys(p.value, kVcKeys, where);
          if (const Node* v = p.value->get("virtualCells"); v && !v->is_null()) {
            if (ctx.is_sequence(v, where + ".virtualCells")) {
              size_t i = 0;
              for (const Node* c : v->items()) {
                std::string w = where + ".virtualCells[" + std::to_string(i++) + "]";
                if (!ctx.is_mapping(c, w)) continue;
                ctx.unknown_keys(c, kVirtualCellKeys, w);
                VirtualCellSpec s;
                s.mark = ctx.at(c);
                if (const Node* t = ctx.required(c, "cellType", w)) {
                  s.type_mark = ctx.at(t);
                  if (auto tv = scalar_text(t, w + ".cellType", ctx)) s.cell_type = *tv;
                }
                if (const Node* n = ctx.required(c, "cellNumber", w)) {
                  s.number_mark = ctx.at(n);
                  if (auto nv = ctx.int_value(n, w + ".cellNumber")) {
                    s.cell_number = *nv;
                    if (*nv == 0)
                      // HiveD accepts and runs it (its own tests do); it only guarantees nothing.
                      ctx.warning("H026", ctx.at(n),
                                  w + ".cellNumber is 0, so the VC is guaranteed no " +
                                      s.cell_type + " cells",
                                  "remove the entry, or give the number of cells the VC needs");
                    else if (*nv < 0 || *nv > 100'000'000)
                      ctx.error("H016", ctx.at(n),
                                w + ".cellNumber must be between 0 and 100000000, found " +
                                    std::to_string(*nv),
                                "HiveD's capacity check counts cells down the chain; a negative "
                                "number gives other VCs cells that do not exist");
                  }
                }
                if (!s.cell_type.empty()) vc.virtual_cells.push_back(std::move(s));
              }
            }
          }
          if (const Node* pcs = p.value->get("pinnedCells"); pcs && !pcs->is_null()) {
            if (ctx.is_sequence(pcs, where + ".pinnedCells")) {
              size_t i = 0;
              for (const Node* c : pcs->items()) {
                std::string w = where + ".pinnedCells[" + std::to_string(i++) + "]";
                if (!ctx.is_mapping(c, w)) continue;
                ctx.unknown_keys(c, {"pinnedCellId"}, w);
                if (const Node* id = ctx.required(c, "pinnedCellId", w))
                  if (auto v = scalar_text(id, w + ".pinnedCellId", ctx))
                    vc.pinned_cells.push_back({*v, ctx.at(id)});
              }
            }
          }
        }
        cfg.virtual_clusters.push_back(std::move(vc));
      }
    }
  }
  return cfg;
}

}  // namespace pai::config
