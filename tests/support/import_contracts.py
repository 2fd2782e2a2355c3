"""Import contracts of our own for `lint-imports` (pyproject.toml `contract_types`).

`standard_library_only` is an allow-list: the source packages may import themselves, the
packages listed as allowed, and the standard library (`sys.stdlib_module_names`), nothing
else. A `forbidden` contract can only name the packages someone thought of; this one also
catches the next dependency nobody listed."""

import sys
from typing import TypedDict

from grimp import ImportGraph
from importlinter.application import output
from importlinter.domain import fields
from importlinter.domain.contract import Contract, ContractCheck


class _Offence(TypedDict):
    importer: str
    imported: str
    lines: list[int]


class StandardLibraryOnlyContract(Contract):
    type_name = "standard_library_only"

    source_modules = fields.SetField(subfield=fields.ModuleField())
    allowed_modules = fields.SetField(subfield=fields.ModuleField(), required=False)

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        sources = {module.name for module in self.source_modules}
        allowed = sources | {m.name for m in self.allowed_modules or ()}
        offences: list[_Offence] = []
        for source in sorted(sources):
            for importer in sorted({source} | graph.find_descendants(source)):
                for imported in sorted(graph.find_modules_directly_imported_by(importer)):
                    if _allowed(imported, allowed):
                        continue
                    details = graph.get_import_details(importer=importer, imported=imported)
                    lines = sorted(d["line_number"] for d in details)
                    offences.append({"importer": importer, "imported": imported, "lines": lines})
        return ContractCheck(kept=not offences, warnings=[], metadata={"offences": offences})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for offence in check.metadata["offences"]:
            lines = ", ".join(str(n) for n in offence["lines"])
            output.print_error(
                f"{offence['importer']} imports {offence['imported']} (l. {lines}), "
                "which is neither the standard library nor allowed"
            )
            output.new_line()


def _allowed(imported: str, allowed: set[str]) -> bool:
    if imported.split(".")[0] in sys.stdlib_module_names:
        return True
    return any(imported == name or imported.startswith(name + ".") for name in allowed)
