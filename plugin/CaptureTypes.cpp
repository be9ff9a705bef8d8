// The types the capture knows: kiln::Tensor, kiln::Operand, host scalars,
// and values made of several tensors (std::pair, std::tuple, aggregates).
#include "CaptureImpl.h"
#include "Options.h"

#include <clang/AST/ASTContext.h>
#include <clang/AST/ASTLambda.h>
#include <clang/AST/DeclCXX.h>
#include <clang/AST/DeclTemplate.h>
#include <clang/Basic/SourceManager.h>

using namespace clang;

namespace kiln::plugin {

std::string Slot::name() const {
  std::string s = var ? var->getNameAsString() : "this";
  for (auto [i, f] : llvm::enumerate(fields))
    s += (i == 0 && !var ? "->" : ".") + f->getNameAsString();
  return s;
}

std::vector<DType> Slot::pinned_dtypes() const {
  const auto *p = llvm::dyn_cast_or_null<ParmVarDecl>(var);
  return p && fields.empty() ? plugin::pinned_dtypes(p) : std::vector<DType>{};
}

const LambdaCapture *lambda_capture(const FunctionDecl *fd, const VarDecl *v) {
  if (!v || !isLambdaCallOperator(fd))
    return nullptr;
  for (const LambdaCapture &c : cast<CXXMethodDecl>(fd)->getParent()->captures())
    if (c.capturesVariable() && c.getCapturedVar() == v)
      return &c;
  return nullptr;
}

ir::Loc to_ir_loc(const ASTContext &ctx, SourceLocation loc) {
  if (loc.isInvalid())
    return {};
  const SourceManager &sm = ctx.getSourceManager();
  PresumedLoc p = sm.getPresumedLoc(sm.getExpansionLoc(loc));
  if (p.isInvalid())
    return {};
  return {p.getFilename(), p.getLine(), p.getColumn()};
}

bool is_kiln_tensor(QualType t) { return capture::is_kiln_class(t, "Tensor"); }

namespace capture {

bool in_kiln_namespace(const Decl *d) {
  const DeclContext *dc = d->getDeclContext();
  while (dc && (isa<LinkageSpecDecl>(dc) ||
                (isa<NamespaceDecl>(dc) && cast<NamespaceDecl>(dc)->isInline())))
    dc = dc->getParent();
  const auto *ns = dyn_cast_or_null<NamespaceDecl>(dc);
  return ns && !ns->isAnonymousNamespace() && ns->getName() == "kiln" &&
         ns->getParent()->getRedeclContext()->isTranslationUnit();
}

bool is_kiln_class(QualType t, llvm::StringRef name) {
  if (t.isNull())
    return false;
  const auto *rd = t.getNonReferenceType()->getAsCXXRecordDecl();
  return rd && rd->getIdentifier() && rd->getName() == name &&
         in_kiln_namespace(rd);
}

bool is_kiln_dtype(QualType t) {
  if (t.isNull())
    return false;
  const auto *et = t.getNonReferenceType()->getAs<EnumType>();
  return et && et->getDecl()->getIdentifier() &&
         et->getDecl()->getName() == "DType" && in_kiln_namespace(et->getDecl());
}

std::optional<codegen::ArgKind> scalar_kind(QualType t) {
  t = t.getNonReferenceType().getCanonicalType().getUnqualifiedType();
  if (t->isBooleanType())
    return codegen::ArgKind::Bool;
  if (t->isRealFloatingType())
    return codegen::ArgKind::Double;
  if (t->isIntegerType() && !t->isEnumeralType())
    return codegen::ArgKind::Int64;
  return std::nullopt;
}

DType scalar_dtype(QualType t) {
  switch (*scalar_kind(t)) {
  case codegen::ArgKind::Bool:
    return DType::b8;
  case codegen::ArgKind::Double:
    return DType::f64;
  default:
    return DType::i64;
  }
}

bool is_float_type(QualType t) {
  return t.getNonReferenceType()->isSpecificBuiltinType(BuiltinType::Float);
}

static bool is_std_class(QualType t, llvm::StringRef name) {
  const auto *rd = t.getNonReferenceType()->getAsCXXRecordDecl();
  return rd && rd->getIdentifier() && rd->getName() == name &&
         rd->isInStdNamespace();
}

bool is_tensor_vector(QualType t) {
  if (t.isNull() || !is_std_class(t, "vector"))
    return false;
  const auto *spec = dyn_cast<ClassTemplateSpecializationDecl>(
      t.getNonReferenceType()->getAsCXXRecordDecl());
  return spec && spec->getTemplateArgs().size() >= 1 &&
         spec->getTemplateArgs()[0].getKind() == TemplateArgument::Type &&
         is_kiln_tensor(spec->getTemplateArgs()[0].getAsType()) &&
         !spec->getTemplateArgs()[0].getAsType()->isReferenceType();
}

bool tensor_vector_element(const Expr *e, const Expr *&vec, const Expr *&index) {
  if (const auto *oc = dyn_cast<CXXOperatorCallExpr>(e);
      oc && oc->getOperator() == OO_Subscript && oc->getNumArgs() == 2 &&
      is_tensor_vector(oc->getArg(0)->getType())) {
    vec = oc->getArg(0);
    index = oc->getArg(1);
    return true;
  }
  if (const auto *mc = dyn_cast<CXXMemberCallExpr>(e);
      mc && mc->getNumArgs() == 1 && mc->getMethodDecl() &&
      mc->getMethodDecl()->getIdentifier() &&
      mc->getMethodDecl()->getName() == "at" &&
      is_tensor_vector(mc->getImplicitObjectArgument()->getType())) {
    vec = mc->getImplicitObjectArgument();
    index = mc->getArg(0);
    return true;
  }
  return false;
}

unsigned tensor_tuple_arity(QualType t) {
  if (t.isNull() || t->isReferenceType())
    return 0;
  if (is_kiln_tensor(t))
    return 1;
  const auto *rd = t->getAsCXXRecordDecl();
  if (!rd || !rd->hasDefinition())
    return 0;
  if (is_std_class(t, "pair") || is_std_class(t, "tuple")) {
    const auto *spec = dyn_cast<ClassTemplateSpecializationDecl>(rd);
    if (!spec)
      return 0;
    llvm::SmallVector<TemplateArgument, 4> args;
    for (const TemplateArgument &a : spec->getTemplateArgs().asArray()) {
      if (a.getKind() == TemplateArgument::Pack)
        args.append(a.pack_begin(), a.pack_end());
      else
        args.push_back(a);
    }
    for (const TemplateArgument &a : args)
      if (a.getKind() != TemplateArgument::Type || !is_kiln_tensor(a.getAsType()) ||
          a.getAsType()->isReferenceType())
        return 0;
    return args.size();
  }
  if (!rd->isAggregate() || rd->getNumBases() != 0 || rd->isUnion() ||
      rd->isLambda())
    return 0;
  unsigned n = 0;
  for (const FieldDecl *f : rd->fields()) {
    if (!is_kiln_tensor(f->getType()) || f->getType()->isReferenceType() ||
        f->isBitField())
      return 0;
    ++n;
  }
  return n;
}

Capturer::Capturer(ASTContext &ctx, const FunctionDecl *fd, const PlanEnv &env)
    : ctx_(ctx), fd_(fd), env_(env) {
  QualType rt = fd->getReturnType();
  if (rt->isVoidType()) {
    fn_ret_ = ReturnKind::Void;
  } else if (unsigned n = tensor_tuple_arity(rt)) {
    fn_ret_ = ReturnKind::Value;
    fn_ret_arity_ = n;
  }
  reset();
}

} // namespace capture
} // namespace kiln::plugin
