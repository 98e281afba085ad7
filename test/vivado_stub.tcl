#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause
#
# A model of the Vivado commands a LiteX-generated build script and its XDC use, for tclsh: runs
# the script to its end without Vivado and records what each command sets. It models only what
# the placement and the IP configuration depend on:
#
# - version -short: the Vivado version modeled (::vs::vivado_version).
# - create_ip -vendor -library -name -version: the IP catalog holds each IP at one version (the one
#   of its published complete parameter list, ::vs::ip_version); another version is an error.
# - set_property -dict CONFIG.*: the IP's CONFIG names are checked (case-insensitive, as Vivado)
#   against the published complete list of the IP's parameters (::vs::valid); an unknown name is an
#   error, as in Vivado. get_property CONFIG.<name> of an IP: its default (::vs::ip_default).
# - read_xdc + PROCESSING_ORDER: at synth_design the netlist's cells (::vs::netlist, per IP
#   instance) are created and the constraints applied in Vivado's order: EARLY XDC files, then each
#   IP's own XDC (modeled: its default LOC of every cell, ::vs::ip_locs), then NORMAL, then LATE.
#   Commands after synth_design (pre-placement commands) run in script order, after every XDC.
# - get_cells -hierarchical [-regexp] [-quiet] -filter: PRIMITIVE_TYPE / NAME / REF_NAME clauses
#   joined by && and ||, with == != (case-insensitive) and =~ !~ (a glob, or with -regexp an anchored,
#   case-sensitive regular expression, as Vivado's). The cells' PRIMITIVE_TYPE is spelt as the IPs'
#   own XDCs and published designs spell it (IO.gt.GTXE2_CHANNEL on the 7 series).
# - Clocks: create_clock on a port creates that port's clock; a net's clock exists once the clock
#   it derives from (::vs::clock_root: a port's, or one the IP's own XDC creates, "ip:<module>")
#   exists. get_clocks -of_objects/-of [-include_generated_clocks] returns the clocks that exist at
#   that point of the processing order (with -include_generated_clocks: every clock of the same
#   root, a superset of Vivado's); a timing constraint (set_max_delay, set_false_path,
#   set_clock_groups) given an empty list is dropped with Vivado's critical warning, recorded
#   (unless -quiet). A set_max_delay between two clocks that a set_clock_groups -asynchronous
#   separates is void (clock groups take precedence): recorded too.
# - set_property / reset_property LOC on cells; the sites at place_design are the result.
# - set_property on an empty object list: Vivado's Common 17-55, an error unless the script
#   downgraded it with set_msg_config (LiteX does): then a warning, recorded.
# Any other command is an error (Tcl's "invalid command name"), so the script must use only the
# commands modeled here.

namespace eval ::vs {
    variable valid      ;# ip type -> list of valid CONFIG names (lower case).
    variable ip_version ;# ip type -> the version in the IP catalog.
    variable ip_default ;# "ip type,name" -> default value of a CONFIG parameter.
    variable clock_root ;# net -> the clock it derives from ("port:<name>", "ip:<module>").
    variable ip_clocks  ;# IP module -> clock roots its own XDC creates.
    variable vivado_version "2025.2"
    variable roots      {}             ;# Clock roots created so far.
    variable timing     {}             ;# {source command from to value}.
    variable async      {}             ;# {clock clock} pairs separated by set_clock_groups.
    variable netlist    ;# IP module -> list of {cell PRIMITIVE_TYPE REF_NAME}.
    variable ip_locs    ;# IP module -> list of {cell site}: the IP's own XDC (modeled).
    variable ips        [dict create]  ;# module -> ip type (creation order).
    variable config     [dict create]  ;# module -> {name value}.
    variable cells      [dict create]  ;# cell -> dict(PRIMITIVE_TYPE, REF_NAME, LOC).
    variable xdcs       {}             ;# XDC files in read order.
    variable order      [dict create]  ;# XDC file -> EARLY/NORMAL/LATE.
    variable downgraded {}             ;# Message ids downgraded to warnings.
    variable warnings   {}
    variable events     {}             ;# {source command cell value}.
    variable source     "script"
    variable stage      "project"
    variable placed     {}
    array set valid      {}
    array set ip_version {}
    array set ip_default {}
    array set netlist    {}
    array set ip_locs    {}
    array set clock_root {}
    array set ip_clocks  {}
}

proc ::vs::event {cmd obj value} {
    variable events
    variable source
    lappend events [list $source $cmd $obj $value]
}

proc ::vs::objects {kind names} {
    set r {}
    foreach n $names { lappend r "$kind:$n" }
    return $r
}

proc ::vs::split_op {s op} {
    return [split [string map [list $op \x01] $s] \x01]
}

proc ::vs::clause {props clause regexp} {
    if {![regexp {^\s*([A-Za-z_][A-Za-z0-9_.]*)\s*(==|!=|=~|!~)\s*(.*?)\s*$} $clause -> prop op value]} {
        error "vivado stub: cannot parse filter clause '$clause'"
    }
    set value [string trim $value "\""]
    set have  [expr {[dict exists $props $prop] ? [dict get $props $prop] : ""}]
    switch -- $op {
        "==" { return [expr {[string equal -nocase $have $value]}] }
        "!=" { return [expr {![string equal -nocase $have $value]}] }
        "=~" - "!~" {
            if {$regexp} {
                set m [regexp -- "^(?:$value)\$" $have]
            } else {
                set m [string match $value $have]
            }
            return [expr {$op eq "=~" ? $m : !$m}]
        }
    }
}

proc ::vs::match {props filter regexp} {
    foreach alt [split_op $filter "||"] {
        set ok 1
        foreach c [split_op $alt "&&"] {
            if {![clause $props $c $regexp]} { set ok 0; break }
        }
        if {$ok} { return 1 }
    }
    return 0
}

# Project, sources, messages -----------------------------------------------------------------------

proc create_project {args} { set ::vs::stage "project" }
proc version {args} {
    if {$args ne "-short"} { error "vivado stub: version $args not modeled" }
    return $::vs::vivado_version
}
proc set_param {args} {}
proc set_msg_config {args} {
    set i [lsearch $args "-id"]
    if {$i >= 0 && [lsearch $args "-new_severity"] >= 0} { lappend ::vs::downgraded [lindex $args $i+1] }
}
proc read_verilog {args} {
    set f [lindex $args end]
    if {![file exists $f]} { error "read_verilog: $f does not exist" }
}
proc read_vhdl {args} {}
proc read_edif {args} {}
proc read_xdc {args} {
    set f [lindex $args end]
    if {![file exists $f]} { error "read_xdc: $f does not exist" }
    lappend ::vs::xdcs $f
    dict set ::vs::order $f NORMAL
}
proc get_files {args} { return [::vs::objects file [lindex $args end]] }
proc current_design {args} { return "design" }

# IPs ----------------------------------------------------------------------------------------------

proc create_ip {args} {
    array set a {-name "" -module_name "" -vendor "" -library "" -version ""}
    foreach {k v} $args { set a($k) $v }
    if {![info exists ::vs::valid($a(-name))]} { error "create_ip: IP '$a(-name)' not modeled" }
    set have "xilinx.com:ip:$a(-name):$::vs::ip_version($a(-name))"
    if {"$a(-vendor):$a(-library):$a(-name):$a(-version)" ne $have} {
        error "ERROR: create_ip: no IP '$a(-vendor):$a(-library):$a(-name):$a(-version)' in the IP catalog (it has $have)"
    }
    if {[dict exists $::vs::ips $a(-module_name)]} { error "create_ip: $a(-module_name) exists" }
    dict set ::vs::ips $a(-module_name) $a(-name)
    dict set ::vs::config $a(-module_name) [dict create]
}
proc get_property {name obj} {
    set obj [lindex $obj 0]
    if {![string match "ip:*" $obj] || ![string match -nocase "CONFIG.*" $name]} {
        error "vivado stub: get_property $name of $obj not modeled"
    }
    set m [string range $obj 3 end]
    set ip [dict get $::vs::ips $m]
    set p [string tolower [string range $name 7 end]]
    dict for {k v} [dict get $::vs::config $m] { if {[string tolower $k] eq $p} { return $v } }
    if {![info exists ::vs::ip_default($ip,$p)]} { error "get_property: $ip has no parameter $name" }
    return $::vs::ip_default($ip,$p)
}
proc get_ips {args} {
    set m [lindex $args end]
    if {![dict exists $::vs::ips $m]} { error "get_ips: no IP $m" }
    return [::vs::objects ip $m]
}
proc synth_ip {args} {}
proc generate_target {args} {}

# Cells, ports, nets, clocks -----------------------------------------------------------------------

proc get_cells {args} {
    set args [lsearch -all -inline -not -exact $args "-quiet"]
    set regexp [expr {[lsearch $args "-regexp"] >= 0}]
    set i [lsearch $args "-filter"]
    if {$i < 0} { return [::vs::objects cell [lindex $args end]] }
    set filter [lindex $args $i+1]
    set r {}
    dict for {name props} $::vs::cells {
        if {[::vs::match [dict merge $props [list NAME $name]] $filter $regexp]} { lappend r "cell:$name" }
    }
    return $r
}
proc get_ports  {args} { return [::vs::objects port [lindex $args end]] }
proc get_nets   {args} { return [::vs::objects net [lindex $args end]] }
proc get_iobanks {args} { return [::vs::objects iobank [lindex $args end]] }
proc get_pins   {args} { return [list "pin:[lindex $args end]"] }

proc ::vs::root_of {obj} {
    lassign [split $obj :] kind
    set name [string range $obj [string length $kind]+1 end]
    switch -- $kind {
        port { return "port:$name" }
        net {
            if {![info exists ::vs::clock_root($name)]} {
                error "vivado stub: no clock model for net $name (::vs::clock_root)"
            }
            return $::vs::clock_root($name)
        }
        default { error "vivado stub: get_clocks of $obj not modeled" }
    }
}
proc get_clocks {args} {
    set generated [expr {[lsearch $args "-include_generated_clocks"] >= 0}]
    set args [lsearch -all -inline -not -exact $args "-include_generated_clocks"]
    set i [lsearch -regexp $args {^-of(_objects)?$}]
    if {$i < 0} { error "vivado stub: get_clocks $args not modeled (only -of_objects)" }
    set r {}
    foreach obj [lindex $args $i+1] {
        set root [::vs::root_of $obj]
        if {[lsearch -exact $::vs::roots $root] < 0} { continue }
        if {$generated} {
            # The root's clock and every net clock derived from it.
            lappend r "clock:$root"
            foreach net [lsort [array names ::vs::clock_root]] {
                if {$::vs::clock_root($net) eq $root} { lappend r "clock:net:$net" }
            }
        } else {
            lappend r "clock:$obj"
        }
    }
    return [lsort -unique $r]
}
proc create_clock {args} {
    set objs [lindex $args end]
    foreach obj $objs {
        if {![string match "port:*" $obj]} { error "vivado stub: create_clock on $obj not modeled" }
        lappend ::vs::roots $obj
    }
    ::vs::event create_clock "" $args
}

# Timing constraints: the clock lists they are given must not be empty (Vivado drops the
# constraint with a critical warning).
proc ::vs::timing {cmd args} {
    set quiet [expr {[lsearch $args "-quiet"] >= 0}]
    set args [lsearch -all -inline -not -exact $args "-quiet"]
    set args [lsearch -all -inline -not -exact $args "-datapath_only"]
    set args [lsearch -all -inline -not -exact $args "-asynchronous"]
    set from {}; set to {}; set groups {}; set value ""
    for {set i 0} {$i < [llength $args]} {incr i} {
        set a [lindex $args $i]
        switch -- $a {
            -from - -to - -through - -group {
                set objs [lindex $args [incr i]]
                if {[llength $objs] == 0} {
                    if {!$quiet} {
                        lappend ::vs::warnings "CRITICAL WARNING: \[Vivado 12-4739\] $cmd: no valid object(s) found for '$a' ($::vs::source)."
                    }
                    return
                }
                switch -- $a { -from { set from $objs } -to { set to $objs } -group { lappend groups $objs } }
            }
            default { set value $a }
        }
    }
    if {$cmd eq "set_clock_groups"} {
        for {set i 0} {$i < [llength $groups]} {incr i} {
            for {set j 0} {$j < [llength $groups]} {incr j} {
                if {$i == $j} { continue }
                set g1 [lindex $groups $i]
                set g2 [lindex $groups $j]
                foreach c1 $g1 { foreach c2 $g2 { if {$c1 ne $c2} { lappend ::vs::async [list $c1 $c2] } } }
            }
        }
    }
    lappend ::vs::timing [list $::vs::source $cmd $from $to $value]
}
proc set_false_path   {args} { ::vs::timing set_false_path {*}$args }
proc set_max_delay    {args} { ::vs::timing set_max_delay {*}$args }
proc set_clock_groups {args} { ::vs::timing set_clock_groups {*}$args }

# Properties ---------------------------------------------------------------------------------------

proc ::vs::set_one {name value obj} {
    lassign [split $obj :] kind what
    set what [string range $obj [string length $kind]+1 end]
    switch -- $kind {
        ip {
            if {![string match -nocase "CONFIG.*" $name]} { return }
            set p [string range $name 7 end]
            set ip [dict get $::vs::ips $what]
            if {[lsearch -exact $::vs::valid($ip) [string tolower $p]] < 0} {
                error "set_property: $ip has no parameter CONFIG.$p (on $what)"
            }
            dict set ::vs::config $what $p $value
            ::vs::event set_property $obj [list $name $value]
        }
        cell {
            if {![dict exists $::vs::cells $what]} { error "set_property: no cell $what" }
            if {$name eq "LOC"} {
                dict set ::vs::cells $what LOC $value
                ::vs::event LOC $what $value
            }
        }
        file {
            if {$name eq "PROCESSING_ORDER"} { dict set ::vs::order $what $value }
        }
        default { ::vs::event set_property $obj [list $name $value] }
    }
}

proc ::vs::no_objects {cmd} {
    if {[lsearch $::vs::downgraded "Common 17-55"] >= 0} {
        lappend ::vs::warnings "WARNING: \[Common 17-55\] '$cmd' expects at least one object ($::vs::source)."
    } else {
        error "ERROR: \[Common 17-55\] '$cmd' expects at least one object."
    }
}

proc set_property {args} {
    set args [lsearch -all -inline -not -exact $args "-quiet"]
    if {[lindex $args 0] eq "-dict"} {
        set pairs [lindex $args 1]
        set objs  [lindex $args 2]
    } else {
        set pairs [lrange $args 0 1]
        set objs  [lindex $args 2]
    }
    if {[llength $objs] == 0} { ::vs::no_objects set_property; return }
    foreach obj $objs {
        foreach {name value} $pairs { ::vs::set_one $name $value $obj }
    }
}

proc reset_property {args} {
    lassign $args name objs
    if {[llength $objs] == 0} { ::vs::no_objects reset_property; return }
    foreach obj $objs {
        set what [string range $obj 5 end]
        if {$name eq "LOC" && [string match "cell:*" $obj]} {
            dict set ::vs::cells $what LOC ""
            ::vs::event reset_LOC $what ""
        }
    }
}

# Flow ---------------------------------------------------------------------------------------------

proc ::vs::read_constraints {when} {
    foreach f $::vs::xdcs {
        if {[dict get $::vs::order $f] ne $when} { continue }
        set ::vs::source "xdc:$f:$when"
        uplevel #0 [list source $f]
    }
}

proc synth_design {args} {
    # The netlist: every created IP's cells.
    dict for {m ip} $::vs::ips {
        if {![info exists ::vs::netlist($m)]} { error "synth_design: no netlist model for $m" }
        foreach c $::vs::netlist($m) {
            lassign $c name ptype ref
            dict set ::vs::cells $name [dict create PRIMITIVE_TYPE $ptype REF_NAME $ref LOC ""]
        }
    }
    # Constraints, in Vivado's processing order.
    ::vs::read_constraints EARLY
    dict for {m ip} $::vs::ips {
        set ::vs::source "ip-xdc:$m"
        if {[info exists ::vs::ip_clocks($m)]} { lappend ::vs::roots {*}$::vs::ip_clocks($m) }
        foreach c $::vs::ip_locs($m) {
            lassign $c name site
            set_property LOC $site [list "cell:$name"]
        }
    }
    ::vs::read_constraints NORMAL
    ::vs::read_constraints LATE
    set ::vs::source "script"
    set ::vs::stage "synthesized"
}
proc link_design {args} { synth_design }
proc opt_design {args} {
    if {$::vs::stage ne "synthesized"} { error "opt_design before synth_design" }
}
proc place_design {args} {
    if {$::vs::stage ne "synthesized"} { error "place_design before synth_design" }
    set ::vs::placed {}
    dict for {name props} $::vs::cells { lappend ::vs::placed $name [dict get $props LOC] }
    set ::vs::stage "placed"
}
proc phys_opt_design {args} {}
proc route_design {args} {
    if {$::vs::stage ne "placed"} { error "route_design before place_design" }
    set ::vs::stage "routed"
}
proc write_checkpoint {args} {}
proc write_bitstream {args} {
    if {$::vs::stage ne "routed"} { error "write_bitstream before route_design" }
    set ::vs::stage "bitstream"
}
proc write_cfgmem {args} {}
foreach r {report_timing_summary report_utilization report_io report_control_sets
           report_clock_utilization report_route_status report_drc report_power} {
    proc $r {args} {}
}

proc quit {} {
    # The result, one tab-separated record per line, for the test to parse.
    puts "STAGE\t$::vs::stage"
    dict for {m ip} $::vs::ips {
        puts "IP\t$m\t$ip"
        dict for {k v} [dict get $::vs::config $m] { puts "CONFIG\t$m\t$k\t$v" }
    }
    foreach {name loc} $::vs::placed { puts "PLACED\t$name\t$loc" }
    foreach e $::vs::events {
        lassign $e src cmd obj value
        if {$cmd in {LOC reset_LOC}} { puts "EVENT\t$src\t$cmd\t$obj\t$value" }
    }
    foreach t $::vs::timing {
        lassign $t src cmd from to value
        if {$cmd eq "set_max_delay"} {
            foreach f $from { foreach d $to {
                if {[lsearch -exact $::vs::async [list $f $d]] >= 0} {
                    lappend ::vs::warnings "set_max_delay from $f to $d ($src) is void: a set_clock_groups -asynchronous separates the two clocks."
                }
            } }
        }
        puts "TIMING\t$src\t$cmd\t[join $from { }]\t[join $to { }]\t$value"
    }
    foreach w $::vs::warnings { puts "WARNING\t$w" }
    puts "END"
    exit 0
}
