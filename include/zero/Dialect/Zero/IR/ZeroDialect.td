//===- ZeroDialect.td - the zero dialect -------------------*- tablegen -*-===//
//
// The zero dialect: replica meshes and the collectives of data-parallel
// training, with value semantics on tensors.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_DIALECT_ZERO_IR_ZERODIALECT_TD
#define ZERO_DIALECT_ZERO_IR_ZERODIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Zero_Dialect : Dialect {
  let name = "zero";
  let cppNamespace = "::zero";
  let summary = "Replica meshes and collectives for data-parallel training";
  let description = [{
    The zero dialect describes a data-parallel training program as it is
    written for *one* replica, together with the collectives that connect the
    replicas.

    **Execution model.** A zero program is SPMD: every rank runs the same
    program. A value may differ between ranks (a rank's slice of the data, its
    local gradient, `zero.replica_index`); the collectives are the only
    operations whose results depend on values held by other ranks, and they
    define exactly what crosses ranks. Every rank reaches the same sequence of
    collectives on a group with the same types; a program in which ranks of one
    group diverge (a collective under a condition that differs per rank) is
    erroneous.

    **Meshes.** `zero.mesh` names an n-dimensional grid of ranks. A collective
    names a mesh and the mesh axes that form its group: the ranks that share
    their coordinates on all *other* axes communicate with each other. With the
    axes omitted the group is the whole mesh. On a mesh `@m(shape = [2, 4])`,
    `axes = [1]` makes two groups of four (for example the four GPUs of a
    node), `axes = [0]` four groups of two. Within a group, ranks are ordered by
    their coordinates on the group axes, row-major; that order is the
    *group index* used by `zero.reduce_scatter`, `zero.all_gather` and
    `zero.shard_slice`, and by `zero.replica_index`.

    **Values.** Collectives take and return ranked tensors (value semantics).
    They have no side effects visible to the program: since every rank runs the
    same program, removing an unused collective or merging two identical ones
    happens on every rank alike. Results never alias operands.

    **Asynchrony.** `zero.async` starts one collective and yields a
    `!zero.future`; `zero.await` produces its value. Schedulers move the start
    early and the await late to overlap communication with computation.
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

class Zero_Op<string mnemonic, list<Trait> traits = []>
    : Op<Zero_Dialect, mnemonic, traits>;

class Zero_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Zero_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

#endif // ZERO_DIALECT_ZERO_IR_ZERODIALECT_TD
